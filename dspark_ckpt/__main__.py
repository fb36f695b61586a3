from dspark_ckpt.cli import main

main()
