"""`python -m keel` runs the command line."""

from keel.cli.main import main

main()
