#!/usr/bin/env python3
"""Sanity checks for the harbourpad fixture: runs eval/helpcentre/check.py on this folder."""

import os
import runpy
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.argv = [sys.argv[0], HERE]
runpy.run_path(os.path.join(HERE, "..", "helpcentre", "check.py"), run_name="__main__")
