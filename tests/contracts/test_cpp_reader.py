"""The contract check's readers and comparison, on small sources written here.

Each C++ snippet is the form Caffe2 used (quoted from the eras' sources, with
other names); the reader must give what the C++ said, and the comparison
must catch a difference planted in it. No Caffe2 checkout is needed.
"""

import textwrap

import pytest
from caffe2rnn_contracts import contract, scan_class
from contract_check import cpp_lambda, differences
from cpp_reader import (
    Reader,
    call_args,
    expand_macros,
    read_arg_reads,
    read_gradient_calls,
    read_macros,
    split_top,
    strip_comments,
)

from caffe2rnn import eras
from caffe2rnn.runtime import registry


def _reader(tmp_path, files):
    for rel, text in files.items():
        path = tmp_path / "caffe2" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return Reader(str(tmp_path))


# --- text helpers --------------------------------------------------------------------


def test_comments_strings_and_splitting():
    text = 'a(/* x, y */ "b,//c", d) // tail\nnext'
    assert " ".join(strip_comments(text).split()) == 'a( "b,//c", d) next'
    args, end = call_args('f(g(1, 2), "x,y", {1, 2})', 1)
    assert args == ["g(1, 2)", '"x,y"', "{1, 2}"]
    assert split_top("vector<pair<int, int>> a, b", angles=True) == [
        "vector<pair<int, int>> a",
        "b",
    ]


def test_macros_with_stringizing_and_pasting():
    text = textwrap.dedent(
        """
        #define OP_SINGLE_ARG(type, name, variable, default) \\
          variable(OperatorBase::GetSingleArgument<type>(name, (default)))
        #define REG(x) REGISTER_CPU_OPERATOR(x##Op, Foo<#x>)
        M() : OP_SINGLE_ARG(float, "alpha", alpha_, 0.5f) {}
        REG(Bar)
        """
    ).replace("\\\n", " ")
    out = expand_macros(text, read_macros(text))
    assert 'GetSingleArgument<float>("alpha", (0.5f))' in out
    assert 'REGISTER_CPU_OPERATOR(BarOp, Foo<"Bar">)' in out


def test_cpp_lambdas_evaluate_as_the_cpp():
    assert cpp_lambda("[](int n) { return (n > 0 && n % 2 == 0); }")(4)
    assert not cpp_lambda("[](int n) { return (n > 0 && n % 2 == 0); }")(3)
    both = cpp_lambda("[](int in, int out) { return in >= 2 && out >= 1 && in == out + 1; }")
    assert both(3, 2) and not both(3, 3)
    assert cpp_lambda("[](int in, int out) { return !(in == out); }")(1, 2)
    assert cpp_lambda("not a lambda") is None


def test_argument_reads_fields_and_defaults():
    code = textwrap.dedent(
        """
        a_(OperatorBase::GetSingleArgument<float>("alpha", 0.01f)),
        b_(OperatorBase::GetRepeatedArgument<int>("dims")),
        c_(this->template GetSingleArgument<string>("order", "NCHW")),
        d_(GetSingleArgument("capacity", 1)),
        if (HasArgument("batch")) { batch_ = GetArgument(operator_def, "batch").i(); }
        mode_ = GetArgument(operator_def, "mode").s();
        int k = helper.GetSingleArgument<int>("kernel", 0);  // shape inference: not the op
        """
    )
    reads = read_arg_reads(code)
    assert [(r.how, r.field, r.default) for r in reads["alpha"]] == [("single", "f", "0.01f")]
    assert reads["dims"][0].field == "ints"
    assert reads["order"][0].field == "s"
    assert reads["capacity"][0].field == "i"  # the type deduced from the default
    assert {r.how for r in reads["batch"]} == {"has", "single"}
    assert reads["mode"][0].field == "s"
    assert "kernel" not in reads


def test_gradient_calls_with_local_names():
    code = textwrap.dedent(
        """
        vector<OperatorDef> GetGradientDefs() override {
          string tmp_dims = "_" + O(0) + "_dims";
          return vector<OperatorDef>{
              CreateOperatorDef("Shape", "", vector<string>{I(0)}, vector<string>{tmp_dims}),
              CreateOperatorDef(
                  def_.type() + "Gradient", "", vector<string>{GO(0), tmp_dims},
                  vector<string>{GI(0)}, vector<Argument>{MakeArgument<int>("axis", 1)})};
        }
        """
    )
    calls = read_gradient_calls(code)
    assert calls[0].op_type == "Shape" and calls[0].outputs == ['"_" + O(0) + "_dims"']
    assert calls[1].op_type == "{op}Gradient"
    assert calls[1].inputs == ["GO(0)", '"_" + O(0) + "_dims"'] and calls[1].args == ["axis"]


# --- whole sources ---------------------------------------------------------------------

FOO_CC = """
    template <typename T, class Context>
    class FooOp final : public Operator<Context> {
     public:
      static constexpr int kInputs = 3;
      FooOp(const OperatorDef& def, Workspace* ws)
          : Operator<Context>(def, ws),
            scale_(OperatorBase::GetSingleArgument<float>("scale", 2.0f)) {}
      bool RunOnDevice() override { return true; }
     private:
      float scale_;
    };
    template <class Context>
    using FooAlias = FooOp<float, Context>;
    REGISTER_CPU_OPERATOR(Foo, FooAlias<CPUContext>);
    REGISTER_CPU_OPERATOR(FooGradient, FooOp<float, CPUContext>);
    OPERATOR_SCHEMA(Foo)
        .NumInputs(1, FooOp<float, CPUContext>::kInputs)
        .NumOutputs({1, 2})
        .AllowInplace({{0, 0}, {1, 1}});
    OPERATOR_SCHEMA(FooGradient)
        .NumInputsOutputs([](int in, int out) { return in == out + 1; })
        .EnforceInplace([](int in, int out) { return in == out + 1; });
    class GetFooGradient : public GradientMakerBase {
      using GradientMakerBase::GradientMakerBase;
      vector<OperatorDef> GetGradientDefs() override {
        return SingleGradientDef(
            def_.type() + "Gradient", "", vector<string>{I(0), GO(0)}, vector<string>{GI(0)});
      }
      bool CopyArguments() const override { return false; }
    };
    REGISTER_GRADIENT(Foo, GetFooGradient);
    SHOULD_NOT_DO_GRADIENT(FooGradient);
    """


def test_reader_schema_registration_and_gradient(tmp_path):
    c = _reader(tmp_path, {"operators/foo_op.cc": FOO_CC}).contracts
    foo = c["Foo"]
    assert foo.registered and foo.has_schema
    assert foo.num_inputs == (1, 3)  # static constexpr resolved
    assert foo.num_outputs == frozenset({1, 2})
    assert foo.allow_inplace == frozenset({(0, 0), (1, 1)})
    assert foo.element_types == frozenset({"float"})  # through the template alias
    assert [(r.name, r.field, r.default) for r in foo.args["scale"]] == [("scale", "f", "2.0f")]
    assert foo.gradient == "maker" and not foo.gradient_copies_args
    (call,) = foo.gradient_calls
    assert (call.op_type, call.inputs, call.outputs) == (
        "{op}Gradient",
        ["I(0)", "GO(0)"],
        ["GI(0)"],
    )
    assert c["FooGradient"].gradient == "should-not"


# --- planted differences ---------------------------------------------------------------

RELU_CC = """
    template <typename T, class Context>
    class ReluOp final : public Operator<Context> {
     public:
      ReluOp(const OperatorDef& def, Workspace* ws) : Operator<Context>(def, ws) {}
      bool RunOnDevice() override { return true; }
    };
    REGISTER_CPU_OPERATOR(Relu, ReluOp<float, CPUContext>);
    OPERATOR_SCHEMA(Relu).NumInputs(1).NumOutputs(1).AllowInplace({{0, 0}});
    class GetReluGradient : public GradientMakerBase {
      using GradientMakerBase::GradientMakerBase;
      vector<OperatorDef> GetGradientDefs() override {
        return SingleGradientDef(
            def_.type() + "Gradient", "", vector<string>{O(0), GO(0)}, vector<string>{GI(0)});
      }
    };
    REGISTER_GRADIENT(Relu, GetReluGradient);
    """


def _relu_differences(tmp_path, text):
    cpp = _reader(tmp_path, {"operators/relu_op.cc": text}).contracts["Relu"]
    return [(d.aspect, d.detail) for d in differences(cpp, contract("Relu", "E6"))]


def test_the_faithful_form_has_no_difference(tmp_path):
    assert _relu_differences(tmp_path, RELU_CC) == []


@pytest.mark.parametrize(
    "old, new, aspect, words",
    [
        (".NumInputs(1)", ".NumInputs(1, 2)", "schema", "counts: C++ inputs 1-2"),
        (".AllowInplace({{0, 0}})", "", "schema", "in-place allowed: C++ none"),
        (
            ": Operator<Context>(def, ws) {}",
            ': Operator<Context>(def, ws), a_(GetSingleArgument<float>("alpha", 1.0f)) {}',
            "arg alpha",
            "read by the C++, not by caffe2rnn",
        ),
        ("ReluOp<float, CPUContext>", "ReluOp<double, CPUContext>", "types", "C++ double"),
        ("vector<string>{O(0), GO(0)}", "vector<string>{I(0), GO(0)}", "gradient", "ops: C++"),
        ("REGISTER_GRADIENT(Relu, GetReluGradient);", "NO_GRADIENT(Relu);", "gradient", "C++ none"),
    ],
)
def test_a_planted_difference_is_caught(tmp_path, old, new, aspect, words):
    assert old in RELU_CC
    found = _relu_differences(tmp_path, RELU_CC.replace(old, new))
    assert any(a == aspect and words in d for a, d in found), found


# --- caffe2rnn's side ------------------------------------------------------------------


def test_era_gated_reads_count_in_their_eras_only():
    """``if self.era is None or eras.get(self.era).late_2017_optimizers: ... decay``."""
    adagrad = registry.operator_class("Adagrad")
    assert "decay" in scan_class(adagrad, eras.get("E6"))[0]
    assert "decay" not in scan_class(adagrad, eras.get("E5"))[0]
    assert "decay" in scan_class(adagrad, None)[0]  # no era: every branch
    # ``(era gate) and self.op_type == "GivenTensorFill" and self.args.has("dtype")``:
    # short-circuit, and the op type of the class scanned
    given = registry.operator_class("GivenTensorFill")
    assert "dtype" in scan_class(given, eras.get("E6"))[0]
    assert "dtype" not in scan_class(given, eras.get("E5"))[0]
    assert (
        "dtype" not in scan_class(registry.operator_class("GivenTensorIntFill"), eras.get("E6"))[0]
    )
    flatten = registry.operator_class("Flatten")  # ``... if eras.current().flatten_axis``
    assert "axis" in scan_class(flatten, eras.get("E6"))[0]
    assert "axis" not in scan_class(flatten, eras.get("E5"))[0]


def test_caffe2rnn_contract_reads_schema_args_types_and_gradient():
    c = contract("LayerNorm", "E6")
    assert (c.num_inputs, c.num_outputs) == ((1, 1), (3, 3))
    assert {r.field for r in c.args["epsilon"]} == {"f"}
    assert {"float", "double"} <= c.element_types
    assert c.gradient == "maker"
    c = contract("Relu", "E4")  # the era's gradient maker
    assert c.gradient == "maker"
