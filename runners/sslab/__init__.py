"""slowstart-lab: reproducible TCP slow-start experiments.

The package is split the way an experiment flows:

- ``image``   builds the testbed VM image (rootfs, stock kernel, our module)
- ``vm``      boots that image under QEMU and runs one job inside it
- ``native``  runs the same job on a host that already has what it needs
- ``agent``   runs a job and records its status (inside the VM or natively)
- ``guest``   code that runs on the substrate (standard library only)
"""

__version__ = "0.1.0"
