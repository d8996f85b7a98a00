"""`python -m mmcli`: the `mm` command (its fast `mm act` path first, see fastact.py)."""

from mmcli.fastact import main

main()
