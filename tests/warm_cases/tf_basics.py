"""A TensorFlow script's first lines, as TensorFlow's examples are written (an absl app with a
flag): thread settings before the first op, an op, the devices."""

import tensorflow as tf
from absl import app, flags

flags.DEFINE_integer("threads", 1, "Threads for each of TensorFlow's pools.")


def main(argv):
    tf.config.threading.set_intra_op_parallelism_threads(flags.FLAGS.threads)
    tf.config.threading.set_inter_op_parallelism_threads(flags.FLAGS.threads)
    print("eager", tf.executing_eagerly(), "rest", argv[1:])
    print("sum", float(tf.reduce_sum(tf.range(10.0))))
    print("threads", tf.config.threading.get_intra_op_parallelism_threads(),
          tf.config.threading.get_inter_op_parallelism_threads())
    print("cpus", len(tf.config.list_physical_devices("CPU")))


if __name__ == "__main__":
    app.run(main)
