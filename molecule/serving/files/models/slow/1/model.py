"""Deliberately slow-loading model (python backend).

initialize() sleeps for the "load_seconds" config parameter, so the server keeps
refusing connections (it opens its ports once every model has loaded) while the
warm-up gate waits. execute() returns the length of each input string.
"""
import json
import time

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        seconds = float(config["parameters"]["load_seconds"]["string_value"])
        time.sleep(seconds)

    def execute(self, requests):
        responses = []
        for request in requests:
            text = pb_utils.get_input_tensor_by_name(request, "TEXT").as_numpy()
            lengths = np.array([len(item) for item in text.reshape(-1)], dtype=np.int32)
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("LENGTH", lengths.reshape(text.shape))]))
        return responses
