from mmcli.fastact import main

main()
