from dspark_ckpt.cli.app import main

main()
