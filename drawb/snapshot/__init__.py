"""The snapshot workflow: ``capture(cluster)`` reads a cluster's DRA state, ``scrub`` keeps what a snapshot
holds, ``redact(snapshot)`` renames nodes, UUIDs and PCI ids consistently, and ``from_files(paths)`` builds
one from kubectl output. The file format and its replay are ``drawb.cluster.snapshot``'s.
"""
