"""Kafka topics and consumer groups, in aggregate: what producers wrote, what each group has read.

Producers' successful writes advance a topic's end offset; each consumer group reads as fast as
its members (running consumers that reach the broker) process messages, one at a time each, and
its lag is what it has not read yet. The series are those of the collector's kafkametrics
receiver as its Prometheus exporter names them (a ``{members}`` unit is dropped, a ``1`` unit
becomes ``_ratio``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..telemetry.appmetrics import AppSample


@dataclass
class Group:
    read: float = 0.0  # committed offset
    members: int = 0
    known: bool = False  # a member has joined once (the group exists on the broker)


@dataclass
class Topic:
    end: float = 0.0  # messages written
    groups: dict[str, Group] = field(default_factory=dict)


class Kafka:
    """Topics per namespace (a broker per namespace, as the demo deploys one)."""

    def __init__(self) -> None:
        self.topics: dict[tuple[str, str], Topic] = {}

    def topic(self, namespace: str, name: str) -> Topic:
        return self.topics.setdefault((namespace, name), Topic())

    def produce(self, namespace: str, topic: str, messages: float) -> None:
        self.topic(namespace, topic).end += messages

    def group(self, namespace: str, topic: str, group: str) -> Group:
        found = self.topic(namespace, topic).groups.setdefault(group, Group())
        return found

    def consume(self, namespace: str, topic: str, group: str, members: int, rate_per_member: float,
                dt: float) -> float:
        """Messages the group reads in ``dt`` seconds; ``members`` is how many consumers are connected."""
        state = self.group(namespace, topic, group)
        state.members = members
        if members <= 0:
            return 0.0
        state.known = True
        end = self.topic(namespace, topic).end
        read = min(end - state.read, members * rate_per_member * dt)
        state.read += read
        return read

    def samples(self) -> list[AppSample]:
        out: list[AppSample] = []
        for (namespace, name), topic in sorted(self.topics.items()):
            base = {"namespace": namespace, "topic": name}
            out.append(AppSample("kafka_topic_partitions", base, 1.0, help="Number of partitions in topic."))
            out.append(AppSample("kafka_partition_current_offset_ratio", dict(base, partition="0"),
                                 float(int(topic.end)), help="Current offset of partition of topic."))
            for group_name, group in sorted(topic.groups.items()):
                if not group.known:
                    continue
                labels = {"namespace": namespace, "group": group_name}
                lag = float(int(topic.end) - int(group.read))
                out.append(AppSample("kafka_consumer_group_members", labels, float(group.members),
                                     help="Count of members in the consumer group"))
                out.append(AppSample("kafka_consumer_group_lag_ratio", dict(labels, topic=name, partition="0"), lag,
                                     help="Current approximate lag of consumer group at partition of topic"))
                out.append(AppSample("kafka_consumer_group_lag_sum_ratio", dict(labels, topic=name), lag,
                                     help="Current approximate sum of consumer group lag across all partitions "
                                          "of topic"))
                out.append(AppSample("kafka_consumer_group_offset_ratio", dict(labels, topic=name, partition="0"),
                                     float(int(group.read)),
                                     help="Current offset of the consumer group at partition of topic"))
        return out
