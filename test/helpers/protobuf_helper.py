"""
A Protobuf implementation independent of Loupe's (Google's python3-protobuf), for the tests:
the schema of test/helpers/protobuf.ts built by hand as FileDescriptorProtos, messages encoded
and decoded by the message classes the descriptor pool makes of them, and the Confluent wire
format (magic 0, schema id, message indexes as zig-zag varints) written and read here on its own.

    protobuf_helper.py descriptor-set   -> base64 of the FileDescriptorSet (with the imported files)
    protobuf_helper.py encode   < {"message", "json", "id"?, "indexes"?}  -> base64 of the record
    protobuf_helper.py decode   < {"message", "base64", "framed"}         -> {"id", "indexes", "value"}

Values are JSON as json_format writes and reads them (proto field names kept, defaults shown).
"""
import base64
import json
import sys

from google.protobuf import descriptor_pb2 as d
from google.protobuf import descriptor_pool, json_format, message_factory
from google.protobuf import struct_pb2, timestamp_pb2, wrappers_pb2

F = d.FieldDescriptorProto


def camel(name):
    parts = name.split("_")
    return parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:])


def field(name, number, type_, repeated=False, type_name=None, oneof=None):
    f = F(name=name, number=number, type=type_, label=F.LABEL_REPEATED if repeated else F.LABEL_OPTIONAL, json_name=camel(name))
    if type_name:
        f.type_name = type_name
    if oneof is not None:
        f.oneof_index = oneof
    return f


def files():
    common = d.FileDescriptorProto(name="loupe/test/common.proto", package="loupe.test.common", syntax="proto3")
    status = common.enum_type.add(name="Status")
    for i, n in enumerate(["STATUS_UNKNOWN", "PLACED", "SHIPPED"]):
        status.value.add(name=n, number=i)
    money = common.message_type.add(name="Money")
    money.field.extend([field("currency", 1, F.TYPE_STRING), field("units", 2, F.TYPE_INT64)])

    order_file = d.FileDescriptorProto(
        name="loupe/test/order.proto",
        package="loupe.test",
        syntax="proto3",
        dependency=[
            "loupe/test/common.proto",
            "google/protobuf/timestamp.proto",
            "google/protobuf/struct.proto",
            "google/protobuf/wrappers.proto",
        ],
    )
    order = order_file.message_type.add(name="Order")
    line = order.nested_type.add(name="Line")
    line.field.extend(
        [
            field("sku", 1, F.TYPE_STRING),
            field("qty", 2, F.TYPE_INT32),
            field("price", 3, F.TYPE_MESSAGE, type_name=".loupe.test.common.Money"),
        ]
    )
    entry = order.nested_type.add(name="CountsEntry")
    entry.options.map_entry = True
    entry.field.extend([field("key", 1, F.TYPE_STRING), field("value", 2, F.TYPE_INT64)])
    order.oneof_decl.add(name="payment")
    order.field.extend(
        [
            field("id", 1, F.TYPE_STRING),
            field("status", 2, F.TYPE_ENUM, type_name=".loupe.test.common.Status"),
            field("lines", 3, F.TYPE_MESSAGE, repeated=True, type_name=".loupe.test.Order.Line"),
            field("counts", 4, F.TYPE_MESSAGE, repeated=True, type_name=".loupe.test.Order.CountsEntry"),
            field("card", 5, F.TYPE_STRING, oneof=0),
            field("voucher", 6, F.TYPE_STRING, oneof=0),
            field("placed_at", 7, F.TYPE_MESSAGE, type_name=".google.protobuf.Timestamp"),
            field("total", 8, F.TYPE_INT64),
            field("extra", 9, F.TYPE_MESSAGE, type_name=".google.protobuf.Struct"),
            field("note", 10, F.TYPE_MESSAGE, type_name=".google.protobuf.StringValue"),
            field("tags", 11, F.TYPE_STRING, repeated=True),
        ]
    )
    refund = order_file.message_type.add(name="Refund")
    refund.field.extend([field("order_id", 1, F.TYPE_STRING), field("amount", 2, F.TYPE_INT64)])

    out = []
    for module in (timestamp_pb2, struct_pb2, wrappers_pb2):
        proto = d.FileDescriptorProto()
        module.DESCRIPTOR.CopyToProto(proto)
        out.append(proto)
    return out + [common, order_file]


def message_class(name):
    pool = descriptor_pool.DescriptorPool()
    for f in files():
        pool.Add(f)
    return message_factory.MessageFactory(pool).GetPrototype(pool.FindMessageTypeByName(name))


def zigzag(n):
    z = (n << 1) ^ (n >> 31)
    out = bytearray()
    while z >= 0x80:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def read_zigzag(b, at):
    shift = z = 0
    while True:
        c = b[at]
        at += 1
        z |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return (z >> 1) ^ -(z & 1), at


def main():
    command = sys.argv[1]
    if command == "descriptor-set":
        s = d.FileDescriptorSet(file=files())
        print(base64.b64encode(s.SerializeToString()).decode())
        return
    req = json.load(sys.stdin)
    cls = message_class(req["message"])
    if command == "encode":
        body = json_format.ParseDict(req["json"], cls()).SerializeToString()
        if req.get("id") is not None:
            indexes = req.get("indexes") or [0]
            head = b"\0" + req["id"].to_bytes(4, "big")
            tail = b"\0" if indexes == [0] else zigzag(len(indexes)) + b"".join(zigzag(i) for i in indexes)
            body = head + tail + body
        print(base64.b64encode(body).decode())
    elif command == "decode":
        raw = base64.b64decode(req["base64"])
        out = {"id": None, "indexes": None}
        if req.get("framed"):
            if raw[0] != 0:
                raise SystemExit("not in the wire format: magic byte %d" % raw[0])
            out["id"] = int.from_bytes(raw[1:5], "big")
            count, at = read_zigzag(raw, 5)
            indexes = []
            for _ in range(count):
                i, at = read_zigzag(raw, at)
                indexes.append(i)
            out["indexes"] = indexes or [0]
            raw = raw[at:]
        m = cls()
        m.ParseFromString(raw)
        out["value"] = json_format.MessageToDict(m, preserving_proto_field_name=True, including_default_value_fields=True)
        print(json.dumps(out))
    else:
        raise SystemExit("unknown command " + command)


main()
