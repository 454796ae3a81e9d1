"""Rebuild one generated incident: python -m tests.generator SEED DIR"""

import sys
from pathlib import Path

from tests.generator import generate

if __name__ == "__main__":
    if len(sys.argv) != 3 or not sys.argv[1].isdigit():
        sys.exit("usage: python -m tests.generator SEED DIR")
    print(generate(int(sys.argv[1]), Path(sys.argv[2])))
