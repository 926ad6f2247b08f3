# temporary device probe (deleted after use)
import sys, os, math, warnings
warnings.filterwarnings("ignore")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np, onnx
from onnx import helper, numpy_helper

def part_a():
    import onnxruntime as ort, models
    print("onnx", onnx.__version__, "ort", ort.__version__, "numpy", np.__version__)
    for fam in models.FAMILIES:
        for ex in models.EXPORTERS:
            m, w = models.build_model(fam, ex)
            onnx.checker.check_model(m, full_check=True)
            onnx.shape_inference.infer_shapes(m, check_type=True, strict_mode=True)
            sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
            for b, s in ((2, 16), (3, 37), (1, 64)):
                inp = models.make_inputs(fam, b, s)
                ref = models.reference_forward(fam, w, inp, 2)
                got = sess.run(None, inp)[0]
                d = np.abs(got - ref)
                print(f"A {fam} {ex} {b}x{s} checker=ok max_abs={d.max():.2e} max_rel={(d/np.maximum(np.abs(ref),1e-3)).max():.2e} normwise={np.linalg.norm(got-ref)/np.linalg.norm(ref):.2e}")

def dump(path):
    m = onnx.load(path)
    vals = {}
    for n in m.graph.node:
        if n.op_type == "Constant":
            a = numpy_helper.to_array(n.attribute[0].t)
            vals[n.output[0]] = a.tolist() if a.size <= 8 else f"T{list(a.shape)}"
    inits = {t.name: (numpy_helper.to_array(t).tolist() if np.prod(t.dims) <= 8 else f"{t.name}{list(t.dims)}") for t in m.graph.initializer}
    short = {}
    for n in m.graph.node:
        if n.op_type == "Constant": continue
        ins = []
        for i in n.input:
            ins.append(str(vals.get(i, inits.get(i, short.get(i, i)))))
        at = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        at = {k: (numpy_helper.to_array(v).tolist() if hasattr(v, "dims") else v) for k, v in at.items()}
        for j, o in enumerate(n.output): short[o] = f"%{len(short)}"
        print(f"  {','.join(short[o] for o in n.output)} = {n.op_type}({', '.join(ins)}) {at if at else ''}")
