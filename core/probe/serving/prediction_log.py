"""TensorFlow Serving's PredictionLog, declared here for the warm-up file.

The probe runs in the user's interpreter, which has TensorFlow (and so protobuf and
TensorProto) but seldom tensorflow-serving-api, which also pins grpcio. So the messages a
Predict warm-up record needs are declared from the upstream field numbers
(tensorflow_serving/apis/prediction_log.proto, predict.proto, model.proto), in a
descriptor pool of their own: they never clash with the real ones where
tensorflow-serving-api is installed. Fields left out (a response, a model version, an
output filter) are kept as unknown fields on reading, as protobuf does with any newer
field. The tests parse what this writes with tensorflow-serving-api's own classes.
"""

from __future__ import annotations

from typing import Any, Dict, List, Set

PACKAGE = "tensorflow.serving"
# PredictionLog's other kinds of record, by field number: declared as bytes (the same wire
# type as a message), so a record of another kind can be named rather than misread.
OTHER_LOGS = {"classify_log": 2, "regress_log": 3, "multi_inference_log": 4, "session_run_log": 5,
              "predict_streamed_log": 7}
PREDICT_LOG = 6


def _field(name: str, number: int, kind: str, type_name: str = "", repeated: bool = False) -> Any:
    from google.protobuf import descriptor_pb2

    f = descriptor_pb2.FieldDescriptorProto
    field = f(name=name, number=number, type=getattr(f, "TYPE_" + kind),
              label=f.LABEL_REPEATED if repeated else f.LABEL_OPTIONAL)
    if type_name:
        field.type_name = type_name
    return field


def _file(tensor_file: str) -> Any:
    from google.protobuf import descriptor_pb2

    proto = descriptor_pb2.FileDescriptorProto(name="tflaunch/serving_warmup.proto", package=PACKAGE,
                                               syntax="proto3", dependency=[tensor_file])
    proto.message_type.add(name="ModelSpec", field=[_field("name", 1, "STRING"),
                                                    _field("signature_name", 3, "STRING")])
    request = proto.message_type.add(name="PredictRequest", field=[
        _field("model_spec", 1, "MESSAGE", f".{PACKAGE}.ModelSpec"),
        _field("inputs", 2, "MESSAGE", f".{PACKAGE}.PredictRequest.InputsEntry", repeated=True)])
    entry = request.nested_type.add(name="InputsEntry", field=[
        _field("key", 1, "STRING"), _field("value", 2, "MESSAGE", ".tensorflow.TensorProto")])
    entry.options.map_entry = True  # what `map<string, TensorProto> inputs = 2` compiles to
    proto.message_type.add(name="PredictLog", field=[_field("request", 1, "MESSAGE", f".{PACKAGE}.PredictRequest")])
    proto.message_type.add(name="PredictionLog", field=[
        _field("predict_log", PREDICT_LOG, "MESSAGE", f".{PACKAGE}.PredictLog"),
        *(_field(name, number, "BYTES") for name, number in OTHER_LOGS.items())])
    return proto


def _add_with_dependencies(pool: Any, file: Any, added: Set[str]) -> None:
    from google.protobuf import descriptor_pb2

    if file.name in added:
        return
    for dependency in file.dependencies:
        _add_with_dependencies(pool, dependency, added)
    proto = descriptor_pb2.FileDescriptorProto()
    file.CopyToProto(proto)
    pool.AddSerializedFile(proto.SerializeToString())
    added.add(file.name)


def _message_class(pool: Any, name: str) -> Any:
    from google.protobuf import message_factory

    descriptor = pool.FindMessageTypeByName(name)
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(descriptor)
    return message_factory.MessageFactory(pool).GetPrototype(descriptor)  # protobuf before 4.21


class PredictionLogs:
    """Makes and reads warm-up records; `tf` gives TensorProto (TensorFlow's own class)."""

    def __init__(self, tf: Any) -> None:
        from google.protobuf import descriptor_pool

        self.tensor_proto = type(tf.make_tensor_proto(0))
        pool = descriptor_pool.DescriptorPool()
        tensor_file = self.tensor_proto.DESCRIPTOR.file
        _add_with_dependencies(pool, tensor_file, set())
        pool.AddSerializedFile(_file(tensor_file.name).SerializeToString())
        self.prediction_log = _message_class(pool, f"{PACKAGE}.PredictionLog")

    def record(self, model_name: str, signature: str, tensors: Dict[str, Any]) -> bytes:
        """One PredictionLog of a Predict request, serialized; `tensors` holds TensorProtos."""
        log = self.prediction_log()
        request = log.predict_log.request
        request.model_spec.name = model_name
        request.model_spec.signature_name = signature
        for name, tensor in tensors.items():
            request.inputs[name].MergeFromString(tensor.SerializeToString())
        # Map entries sorted by key: the same inputs give the same bytes, run after run.
        return bytes(log.SerializeToString(deterministic=True))

    def parse(self, data: bytes) -> Any:
        """The PredictionLog in a record; google.protobuf's DecodeError when it is none."""
        return self.prediction_log.FromString(data)

    def other_kinds(self, log: Any) -> List[str]:
        """The kinds of record a log holds instead of a Predict request."""
        return [name for name in OTHER_LOGS if getattr(log, name)]

    def tensor(self, message: Any) -> Any:
        """An input of a parsed request as TensorFlow's own TensorProto (for tf.make_ndarray)."""
        return self.tensor_proto.FromString(message.SerializeToString())


def requested_signature(log: Any) -> str:
    """The signature a Predict record names; TF Serving reads an empty name as serving_default."""
    return log.predict_log.request.model_spec.signature_name or "serving_default"
