"""Stand-ins for the RHEL tools whose answer on a simulated host comes from its declared state, not from
the machine underneath (``rpm``, ``systemctl``, python's ``rpm`` bindings). :mod:`..tree` installs them
into each host's tree; they run inside the host's private view and read ``/usr/lib/itbench-host/host.json``.
"""
