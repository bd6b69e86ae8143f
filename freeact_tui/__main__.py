from freeact_tui.cli import main

main()
