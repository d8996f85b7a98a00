"""`python -m mmcli`: the `mm` command (its fast `mm act` path first, see cli/fastact.py)."""

from mmcli.cli.fastact import main

main()
