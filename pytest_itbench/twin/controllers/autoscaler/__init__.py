"""cluster-autoscaler in the twin: node groups declared in the kwok provider's ConfigMaps, scaled for
unschedulable pods and unneeded nodes, instance types from ``twin/instance_types.py`` (see ``controller.py``)."""
