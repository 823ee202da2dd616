"""Code that runs on the substrate (inside the VM, or on a native host).

Standard library only: the image carries Debian's python3 and nothing from PyPI.
"""
