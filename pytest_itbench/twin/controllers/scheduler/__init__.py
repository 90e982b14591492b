"""kube-scheduler: a scheduling queue, a framework of filter and score plugins, preemption and binding.

The controller lives in ``controller.py``; this package's ``__init__`` stays
empty so that the volume binder can share the node-selector helpers without
importing the scheduler.
"""
