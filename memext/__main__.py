"""``python -m memext``: the ``memext`` command line."""

from memext.cli import main

if __name__ == "__main__":
    main()
