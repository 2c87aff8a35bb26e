import sys

from mcp_server_web.cli import main

# Guarded: conversion worker processes may import the main module again (multiprocessing).
if __name__ == "__main__":
    sys.exit(main())
