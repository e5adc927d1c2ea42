"""Encrypted checkpoints into PyTorch models, as a transformers user loads
them: the model built on the meta device (no memory for its weights), then
warpcrypt.safetensors.torch.load_model with a sharded checkpoint, onto the
CPU and onto a GPU, tied weights tied again. PyTorch is not installed in
CI (its PyPI wheel brings the CUDA libraries), so these run where it is:
on the GPU machine (scripts/gpu-check.sh python)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed: models are tested where it is")
import warpcrypt  # noqa: E402
import warpcrypt.safetensors as ws  # noqa: E402
import warpcrypt.safetensors.torch as wpt  # noqa: E402

nn = torch.nn


class TiedModel(nn.Module):
    """A language model's shape in small: an embedding whose weight the
    output layer shares, layers with biases, and a buffer."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(64, 16)
        self.layers = nn.ModuleList(nn.Linear(16, 16) for _ in range(4))
        self.head = nn.Linear(16, 64, bias=False)
        self.head.weight = self.embed.weight
        self.register_buffer("scale", torch.full((16,), 0.5))

    def forward(self, ids):
        hidden = self.embed(ids) * self.scale
        for layer in self.layers:
            hidden = torch.tanh(layer(hidden))
        return self.head(hidden)


def parameters_on_meta(model):
    """The model with its parameters on the meta device and its buffers
    where they are, as accelerate.init_empty_weights() builds one (without
    accelerate): tied parameters stay one parameter."""
    moved: dict[int, object] = {}
    for module in model.modules():
        for name, parameter in module._parameters.items():
            if parameter is not None:
                if id(parameter) not in moved:
                    moved[id(parameter)] = nn.Parameter(parameter.to("meta"), requires_grad=parameter.requires_grad)
                module._parameters[name] = moved[id(parameter)]
    return model


def devices() -> list[str]:
    return ["cpu", *(["cuda:0"] if torch.cuda.is_available() else [])]


@pytest.fixture
def keys():
    return ws.generate_keys()


def check_loaded(model, reference, device: str) -> None:
    for name, tensor in reference.state_dict().items():
        loaded = model.state_dict()[name]
        assert loaded.device == torch.device(device) or (device == "cuda:0" and loaded.is_cuda), name
        assert torch.equal(loaded.cpu(), tensor), name
    ids = torch.arange(10).reshape(2, 5)
    with torch.no_grad():
        assert torch.allclose(model(ids.to(device)).cpu(), reference(ids), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("device", devices())
def test_a_meta_model_takes_a_sharded_encrypted_checkpoint_as_its_weights(tmp_path, keys, device):
    torch.manual_seed(1)
    reference = TiedModel()
    wpt.save_state_dict(reference.state_dict(), tmp_path, keys=keys, max_shard_size=2000)
    assert len(list(tmp_path.glob("model-*-of-*.safetensors"))) > 2
    with torch.device("meta"):
        model = TiedModel()
    missing, unexpected = wpt.load_model(model, tmp_path, device=device, keys=keys)
    assert (missing, unexpected) == ([], [])
    assert model.head.weight is model.embed.weight  # tied again
    assert not any(p.is_meta for p in model.parameters()) and not model.scale.is_meta
    assert all(p.requires_grad for p in model.parameters())
    check_loaded(model, reference, device)


@pytest.mark.parametrize("device", devices())
def test_a_built_model_loads_a_sharded_checkpoint_in_place(tmp_path, keys, device):
    torch.manual_seed(2)
    reference = TiedModel()
    wpt.save_state_dict(reference.state_dict(), tmp_path, keys=keys, max_shard_size=2000)
    model = TiedModel().to(device)
    wpt.load_model(model, tmp_path, device=device, keys=keys)
    assert model.head.weight is model.embed.weight
    check_loaded(model, reference, device)


def test_a_device_map_spreads_a_checkpoint(tmp_path, keys):
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device: the device map is tested across the CPU and a GPU where there is one")
    torch.manual_seed(3)
    reference = TiedModel()
    wpt.save_state_dict(reference.state_dict(), tmp_path, keys=keys, max_shard_size=2000)
    loaded = wpt.load_state_dict(tmp_path, keys=keys, device_map={"layers.": "cuda:0", "": "cpu"})
    for name, tensor in loaded.items():
        assert tensor.is_cuda == name.startswith("layers."), name


def test_a_strict_load_names_what_the_checkpoint_lacks(tmp_path, keys):
    reference = TiedModel()
    state = {k: v for k, v in reference.state_dict().items() if not k.startswith("layers.3")}
    wpt.save_state_dict(state, tmp_path, keys=keys, max_shard_size=2000)
    with torch.device("meta"):
        model = TiedModel()
    with pytest.raises(RuntimeError, match='Missing key.*"layers.3.bias", "layers.3.weight"'):
        wpt.load_model(model, tmp_path, keys=keys)


def test_a_transformers_model_on_the_meta_device_loads_an_encrypted_checkpoint(tmp_path, keys):
    transformers = pytest.importorskip("transformers", reason="transformers is not installed")
    config = transformers.LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=True)
    torch.manual_seed(4)
    reference = transformers.LlamaForCausalLM(config).eval()
    wpt.save_state_dict(reference.state_dict(), tmp_path, keys=keys, max_shard_size="100KB")
    device = devices()[-1]
    with torch.device("meta"):
        on_meta = transformers.LlamaForCausalLM(config)
    with pytest.raises(warpcrypt.InvalidArgument, match="rotary.*meta device and no checkpoint holds them"):
        wpt.load_model(on_meta, tmp_path, device=device, keys=keys)
    model = parameters_on_meta(transformers.LlamaForCausalLM(config))
    assert (wpt.load_model(model, tmp_path, device=device, keys=keys)) == ([], [])
    model.eval()
    assert model.lm_head.weight is model.model.embed_tokens.weight
    ids = torch.arange(12).reshape(2, 6)
    with torch.no_grad():
        want = reference(ids).logits
        got = model(ids.to(device)).logits.cpu()
    assert torch.allclose(got, want, atol=1e-5)
