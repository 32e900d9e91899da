"""``python -m qkv`` runs the command-line interface."""

from qkv.cli import main

if __name__ == "__main__":
    main()
