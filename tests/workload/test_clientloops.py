"""Reading a looping kubectl client's cost from its script: its calls, what they list, its pauses."""

from __future__ import annotations

import pytest

from pytest_itbench.twin.workload.clientloops import CPU_PER_OBJECT, KUBECTL_CPU, WALL_PER_CPU, cost, parse


def objects(counts: dict):
    return lambda bucket, namespace: counts.get((bucket, namespace), 0)


def test_a_loop_of_list_calls_and_a_sleep():
    loop = parse("while true; do kubectl get pods,svc,deploy,rs -A -o name >/dev/null 2>&1; sleep 0.5; done", "shop")
    assert loop.sleep == 0.5 and len(loop.calls) == 1
    call = loop.calls[0]
    assert call.namespace is None and not call.background
    assert [b for b, _ in call.buckets] == ["pods", "services", "deployments.apps", "replicasets.apps"]


def test_a_script_file_with_comments_and_namespaced_calls():
    script = ('#!/bin/sh\n# poll\nwhile true; do\n  kubectl -n shop get deployments  # the shop only\n'
              '  kubectl get nodes,namespaces -o name\n  sleep "2"\ndone\n')
    loop = parse(script, "default")
    assert loop.sleep == 2.0
    assert [(c.buckets, c.namespace) for c in loop.calls] == [
        ((("deployments.apps", True),), "shop"), ((("nodes", False), ("namespaces", False)), "default")]


def test_what_is_not_a_kubectl_loop():
    assert parse("while true; do echo hi; sleep 1; done", "ns") is None
    assert parse("kubectl get pods -A", "ns") is None  # runs once
    assert parse("while true; do kubectl get pods; sleep infinity; done", "ns") is None  # stops at its first turn


def test_the_cost_of_a_turn():
    loop = parse("while true; do kubectl get pods -A; kubectl -n shop get svc; sleep 1; done", "default")
    counts = objects({("pods", None): 40, ("services", "shop"): 10})
    cpu = 2 * KUBECTL_CPU + 50 * CPU_PER_OBJECT
    figures = cost(loop, counts)
    assert figures.cpu == pytest.approx(cpu / (cpu * WALL_PER_CPU + 1.0))
    assert figures.requests == pytest.approx(2 / (cpu * WALL_PER_CPU + 1.0))


def test_a_loop_without_pause_burns_about_a_core_whatever_it_lists():
    busy = parse("while true; do kubectl get pods -A -o name; done", "ns")
    for pods in (0, 100, 1000):
        assert cost(busy, objects({("pods", None): pods})).cpu == pytest.approx(1 / WALL_PER_CPU)


def test_calls_in_the_background_do_not_wait_for_each_other():
    loop = parse("while true; do kubectl get pods -A & sleep 0.1; done", "ns")
    assert loop.calls[0].background
    figures = cost(loop, objects({}))
    assert figures.cpu == pytest.approx(KUBECTL_CPU / 0.1)  # ten runs a second, each its own process
