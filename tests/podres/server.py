#!/usr/bin/env python3
"""Play the kubelet's pod-resources socket for tests/cli/podres.sh.

    server.py STUBS SOCKET PODS.json   a real gRPC server (grpcio) answering
                                       List with the pods of PODS.json
    server.py STUBS SOCKET --status N  List fails with gRPC status N
    server.py - SOCKET --hang          accepts connections, reads, never answers

STUBS is the directory where api_pb2.py was generated (grpc_tools.protoc
from tests/podres/api.proto). PODS.json: [{"name", "namespace", "containers":
[{"name", "devices": [{"resource", "ids": [...]}]}]}]. Writes "ready" to
stdout once it listens; runs until killed.
"""
import json
import os
import signal
import socket
import sys
import time


def hang(path):
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(16)
    print("ready", flush=True)
    conns = []
    while True:
        c, _ = srv.accept()
        c.settimeout(0.1)
        conns.append(c)  # kept open, never answered
        try:
            c.recv(65536)
        except OSError:
            pass


def serve(stubs, path, arg, value):
    sys.path.insert(0, stubs)
    from concurrent import futures

    import grpc
    import api_pb2

    def listing(request, context):
        if arg == "--status":
            context.abort(grpc.StatusCode(
                [s for s in grpc.StatusCode if s.value[0] == int(value)][0]),
                "pod resources are unavailable")
        with open(arg) as f:
            pods = json.load(f)
        resp = api_pb2.ListPodResourcesResponse()
        for p in pods:
            pr = resp.pod_resources.add(name=p["name"], namespace=p["namespace"])
            for c in p.get("containers", []):
                cr = pr.containers.add(name=c["name"], cpu_ids=[2, 3])
                for d in c.get("devices", []):
                    cd = cr.devices.add(resource_name=d["resource"], device_ids=d["ids"])
                    cd.topology.nodes.add(ID=0)
        return resp

    handler = grpc.method_handlers_generic_handler("v1.PodResourcesLister", {
        "List": grpc.unary_unary_rpc_method_handler(
            listing,
            request_deserializer=api_pb2.ListPodResourcesRequest.FromString,
            response_serializer=api_pb2.ListPodResourcesResponse.SerializeToString),
    })
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers((handler,))
    server.add_insecure_port("unix:" + os.path.abspath(path))
    server.start()
    print("ready", flush=True)
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    while True:
        time.sleep(3600)


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    stubs, path, arg = sys.argv[1], sys.argv[2], sys.argv[3]
    if arg == "--hang":
        hang(path)
    else:
        serve(stubs, path, arg, sys.argv[4] if len(sys.argv) > 4 else None)


if __name__ == "__main__":
    main()
