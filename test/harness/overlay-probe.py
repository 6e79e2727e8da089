# UDP probes for the overlay tests, run in a pod's network namespace (`nsenter -t <pid> -n python3 …`):
# the packets leave through the pod's own interfaces exactly as the pod's own would.
#   serve PORT FILE              answer each datagram with "udp-ok" and append its source to FILE
#   ask IP PORT                  send one datagram, print the answer or "timeout" (2 s)
#   bind-ask SRC IP PORT         the same from the local address SRC
#   raw SRC IP PORT              one UDP datagram with a hand-made IP header claiming source SRC (IP_HDRINCL)
#   vxlan HOST VNI MAC SRC IP PORT   a VXLAN packet to HOST:4789 carrying, in VNI, an Ethernet frame to MAC
#                                with a UDP datagram from SRC to IP:PORT (what a pod must never inject)
#   vxlan-raw OUTER HOST VNI MAC SRC IP PORT   the same packet with a hand-made outer header claiming source
#                                OUTER (IP_HDRINCL): plaintext VXLAN as someone on the path could send it
#   dns SERVER NAME              one A query to SERVER:53: prints "rcode=N a=IP,IP" or "timeout" (2 s)
#   dns-times SERVER NAME COUNT  COUNT A queries one after the other: prints each round trip in ms
#   big IP PORT SIZE MARKER      one UDP datagram of SIZE bytes as an IP packet (payload MARKER, padded), DF set:
#                                prints the answer, "timeout" (2 s), or "emsgsize" (larger than the route's MTU)
#   ping-df IP SIZE              one ICMP echo of SIZE bytes as an IP packet, DF set: prints "reply SIZE'"
#                                (the reply's size), "timeout" (2 s) or "emsgsize"
import socket
import struct
import sys


def checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b'\0'
    s = sum(struct.unpack('!%dH' % (len(data) // 2), data))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def ip_udp(src: str, dst: str, port: int, payload: bytes) -> bytes:
    udp_len = 8 + len(payload)
    udp = struct.pack('!HHHH', 40000, port, udp_len, 0) + payload
    pseudo = socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack('!BBH', 0, 17, udp_len)
    udp = udp[:6] + struct.pack('!H', checksum(pseudo + udp)) + udp[8:]
    hdr = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + udp_len, 54321, 0, 64, 17, 0, socket.inet_aton(src), socket.inet_aton(dst))
    return hdr[:10] + struct.pack('!H', checksum(hdr)) + hdr[12:] + udp


def vxlan(vni: int, mac: str, src: str, dst: str, port: int) -> bytes:
    inner = ip_udp(src, dst, port, b'vxlan-from-' + src.encode())
    frame = bytes.fromhex(mac.replace(':', '')) + bytes.fromhex('0a0000000002') + b'\x08\x00' + inner
    return struct.pack('!II', 0x08000000, vni << 8) + frame


def dns_query(s: socket.socket, server: str, name: str, qid: int) -> tuple:
    q = struct.pack('!HHHHHH', qid, 0x0100, 1, 0, 0, 0) + b''.join(bytes([len(l)]) + l.encode() for l in name.split('.')) + b'\0' + struct.pack('!HH', 1, 1)
    s.sendto(q, (server, 53))
    while True:
        d = s.recv(2048)
        if struct.unpack('!H', d[:2])[0] == qid:
            break
    rcode, ancount = d[3] & 15, struct.unpack('!H', d[6:8])[0]
    i, ips = len(q), []
    for _ in range(ancount):
        i += 2 if d[i] & 0xC0 == 0xC0 else len(name) + 2
        typ, _, _, rdlen = struct.unpack('!HHIH', d[i:i + 10])
        i += 10
        if typ == 1:
            ips.append(socket.inet_ntoa(d[i:i + 4]))
        i += rdlen
    return rcode, ips


IP_MTU_DISCOVER, IP_PMTUDISC_DO = 10, 2


def df_socket(kind: int, proto: int) -> socket.socket:
    s = socket.socket(socket.AF_INET, kind, proto)
    s.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO)
    s.settimeout(2)
    return s


def main() -> None:
    cmd = sys.argv[1]
    if cmd == 'serve':
        port, path = int(sys.argv[2]), sys.argv[3]
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(('0.0.0.0', port))
        while True:
            data, addr = s.recvfrom(2048)
            with open(path, 'a') as f:
                f.write('%s %s\n' % (addr[0], data.decode(errors='replace')))
            s.sendto(b'udp-ok', addr)
    elif cmd in ('ask', 'bind-ask'):
        args = sys.argv[2:]
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        if cmd == 'bind-ask':
            s.bind((args.pop(0), 0))
        ip, port = args[0], int(args[1])
        s.settimeout(2)
        s.sendto(b'ask', (ip, port))
        try:
            print(s.recvfrom(2048)[0].decode())
        except socket.timeout:
            print('timeout')
    elif cmd == 'raw':
        src, dst, port = sys.argv[2], sys.argv[3], int(sys.argv[4])
        s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
        s.setsockopt(socket.IPPROTO_IP, socket.IP_HDRINCL, 1)
        s.sendto(ip_udp(src, dst, port, b'raw-from-' + src.encode()), (dst, 0))
        print('sent')
    elif cmd == 'vxlan':
        host, vni, mac, src, dst, port = sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6], int(sys.argv[7])
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.sendto(vxlan(vni, mac, src, dst, port), (host, 4789))
        print('sent')
    elif cmd == 'vxlan-raw':
        outer, host, vni, mac, src, dst, port = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6], sys.argv[7], int(sys.argv[8])
        s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
        s.setsockopt(socket.IPPROTO_IP, socket.IP_HDRINCL, 1)
        s.sendto(ip_udp(outer, host, 4789, vxlan(vni, mac, src, dst, port)), (host, 0))
        print('sent')
    elif cmd == 'dns':
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(2)
        try:
            rcode, ips = dns_query(s, sys.argv[2], sys.argv[3], 4242)
            print('rcode=%d a=%s' % (rcode, ','.join(ips)))
        except (socket.timeout, ConnectionRefusedError):
            print('timeout')
    elif cmd == 'big':
        ip, port, size, marker = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5].encode()
        s = df_socket(socket.SOCK_DGRAM, 0)
        try:
            s.sendto(marker + b'x' * (size - 28 - len(marker)), (ip, port))
            print(s.recvfrom(2048)[0].decode())
        except socket.timeout:
            print('timeout')
        except OSError as e:
            print('emsgsize' if e.errno == 90 else 'error %s' % e)
    elif cmd == 'ping-df':
        import os
        ip, size = sys.argv[2], int(sys.argv[3])
        s = df_socket(socket.SOCK_RAW, socket.IPPROTO_ICMP)
        ident = os.getpid() & 0xFFFF
        body = struct.pack('!HH', ident, 1) + b'p' * (size - 28)
        msg = struct.pack('!BBH', 8, 0, 0) + body
        msg = msg[:2] + struct.pack('!H', checksum(msg)) + msg[4:]
        try:
            s.sendto(msg, (ip, 0))
            while True:
                d, addr = s.recvfrom(65535)
                ihl = (d[0] & 15) * 4
                if addr[0] == ip and d[ihl] == 0 and struct.unpack('!H', d[ihl + 4:ihl + 6])[0] == ident:
                    print('reply %d' % struct.unpack('!H', d[2:4])[0])
                    break
        except socket.timeout:
            print('timeout')
        except OSError as e:
            print('emsgsize' if e.errno == 90 else 'error %s' % e)
    elif cmd == 'dns-times':
        import time
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(2)
        for n in range(int(sys.argv[4])):
            t = time.perf_counter()
            dns_query(s, sys.argv[2], sys.argv[3], n + 1)
            print('%.4f' % ((time.perf_counter() - t) * 1000))


main()
