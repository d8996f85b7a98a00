from mmcli.cli import main

main()
