"""The ClusterRole aggregation controller: rules of labelled ClusterRoles gathered into aggregating ones."""

from __future__ import annotations


class ClusterRoleAggregation:
    def __init__(self, api, reactor, ctx):
        self.api = api
