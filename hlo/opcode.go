package hlo

import (
	"fmt"
	"sort"
	"strings"
)

// Opcode names an HLO operation.
type Opcode uint16

// OpClass says how an op's result relates to its operands; the verifier,
// evaluator and code generator dispatch on it before they look at the
// individual opcode.
type OpClass uint8

const (
	ClassOther   OpClass = iota
	ClassUnary           // elementwise, one operand
	ClassBinary          // elementwise, two operands of one type
	ClassTernary         // elementwise, three operands (select, clamp)
)

// opInfo is one row of the opcode table.
type opInfo struct {
	name  string
	arity int // number of operands; -1 for any number
	class OpClass
	types TypeSet // elementwise ops: the kinds of element type the operands may have (0: any)
}

// TypeSet is a set of TypeKinds.
type TypeSet uint8

// The type sets of the opcode table, as XLA's shape inference has them.
const (
	TypesPred    TypeSet = 1 << KindBool
	TypesSigned  TypeSet = 1 << KindSigned
	TypesUnsign  TypeSet = 1 << KindUnsigned
	TypesFloat   TypeSet = 1 << KindFloat
	TypesComplex TypeSet = 1 << KindComplex

	typesInt     = TypesSigned | TypesUnsign
	typesFC      = TypesFloat | TypesComplex
	typesNumeric = typesInt | typesFC                      // not pred
	typesSigned  = TypesSigned | TypesFloat | TypesComplex // XLA's ElementIsSigned, and complex
	typesLogical = TypesPred | typesInt
)

// Has reports whether t's kind is in the set (an empty set has every kind).
func (ts TypeSet) Has(t ElementType) bool { return ts == 0 || ts&(1<<t.Kind()) != 0 }

func (ts TypeSet) String() string {
	var parts []string
	for k, name := range map[TypeKind]string{KindBool: "pred", KindSigned: "signed", KindUnsigned: "unsigned", KindFloat: "float", KindComplex: "complex"} {
		if ts&(1<<k) != 0 {
			parts = append(parts, name)
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, " or ")
}

// The opcodes, in the order of the table below.
const (
	OpInvalid Opcode = iota
	// Elementwise unary.
	OpAbs
	OpAcos
	OpAcosh
	OpAsin
	OpAsinh
	OpAtanh
	OpBitcastConvert
	OpCbrt
	OpCeil
	OpClz
	OpConvert
	OpCopy
	OpCos
	OpCosh
	OpErf
	OpExp
	OpExpm1
	OpFloor
	OpImag
	OpIsFinite
	OpLog
	OpLog1p
	OpLogistic
	OpNegate
	OpNot
	OpPopcnt
	OpReal
	OpReducePrecision
	OpRoundNearestAfz
	OpRoundNearestEven
	OpRsqrt
	OpSign
	OpSin
	OpSinh
	OpSqrt
	OpTan
	OpTanh
	// Elementwise binary.
	OpAdd
	OpAnd
	OpAtan2
	OpCompare
	OpComplex
	OpDivide
	OpMaximum
	OpMinimum
	OpMultiply
	OpOr
	OpPower
	OpRemainder
	OpShiftLeft
	OpShiftRightArithmetic
	OpShiftRightLogical
	OpSubtract
	OpXor
	// Elementwise ternary.
	OpClamp
	OpSelect
	// Everything else.
	OpAddDependency
	OpAfterAll
	OpAllGather
	OpAllGatherDone
	OpAllGatherStart
	OpAllReduce
	OpAllReduceDone
	OpAllReduceStart
	OpAllToAll
	OpAsyncDone
	OpAsyncStart
	OpAsyncUpdate
	OpBatchNormGrad
	OpBatchNormInference
	OpBatchNormTraining
	OpBitcast
	OpBroadcast
	OpCall
	OpCholesky
	OpCollectiveBroadcast
	OpCollectivePermute
	OpCollectivePermuteDone
	OpCollectivePermuteStart
	OpConcatenate
	OpConditional
	OpConstant
	OpConvolution
	OpCopyDone
	OpCopyStart
	OpCustomCall
	OpDomain
	OpDot
	OpDynamicReshape
	OpDynamicSlice
	OpDynamicUpdateSlice
	OpFft
	OpFusion
	OpGather
	OpGetDimensionSize
	OpGetTupleElement
	OpInfeed
	OpIota
	OpMap
	OpOptimizationBarrier
	OpOutfeed
	OpPad
	OpParameter
	OpPartitionID
	OpRaggedAllToAll
	OpRaggedDot
	OpRecv
	OpRecvDone
	OpReduce
	OpReduceScatter
	OpReduceWindow
	OpReplicaID
	OpReshape
	OpReverse
	OpScan
	OpRngBitGenerator
	OpRng
	OpRngGetAndUpdateState
	OpScatter
	OpSelectAndScatter
	OpSend
	OpSendDone
	OpSetDimensionSize
	OpSlice
	OpSort
	OpStochasticConvert
	OpTopK
	OpTranspose
	OpTriangularSolve
	OpTuple
	OpWhile
	numOpcodes
)

// opTable is the one table of HLO operations: name as printed, operand
// count, class, and for elementwise ops the element types they take.
// Parser, verifier, evaluator and lowering consult it.
var opTable = [numOpcodes]opInfo{
	OpInvalid:                {"invalid", 0, ClassOther, 0},
	OpAbs:                    {"abs", 1, ClassUnary, typesSigned},
	OpAcos:                   {"acos", 1, ClassUnary, typesFC},
	OpAcosh:                  {"acosh", 1, ClassUnary, typesFC},
	OpAsin:                   {"asin", 1, ClassUnary, typesFC},
	OpAsinh:                  {"asinh", 1, ClassUnary, typesFC},
	OpAtanh:                  {"atanh", 1, ClassUnary, typesFC},
	OpBitcastConvert:         {"bitcast-convert", 1, ClassUnary, 0},
	OpCbrt:                   {"cbrt", 1, ClassUnary, typesFC},
	OpCeil:                   {"ceil", 1, ClassUnary, TypesFloat},
	OpClz:                    {"count-leading-zeros", 1, ClassUnary, typesInt},
	OpConvert:                {"convert", 1, ClassUnary, 0},
	OpCopy:                   {"copy", 1, ClassUnary, 0},
	OpCos:                    {"cosine", 1, ClassUnary, typesFC},
	OpCosh:                   {"cosh", 1, ClassUnary, typesFC},
	OpErf:                    {"erf", 1, ClassUnary, TypesFloat},
	OpExp:                    {"exponential", 1, ClassUnary, typesFC},
	OpExpm1:                  {"exponential-minus-one", 1, ClassUnary, typesFC},
	OpFloor:                  {"floor", 1, ClassUnary, TypesFloat},
	OpImag:                   {"imag", 1, ClassUnary, typesFC},
	OpIsFinite:               {"is-finite", 1, ClassUnary, TypesFloat},
	OpLog:                    {"log", 1, ClassUnary, typesFC},
	OpLog1p:                  {"log-plus-one", 1, ClassUnary, typesFC},
	OpLogistic:               {"logistic", 1, ClassUnary, typesFC},
	OpNegate:                 {"negate", 1, ClassUnary, typesNumeric},
	OpNot:                    {"not", 1, ClassUnary, typesLogical},
	OpPopcnt:                 {"popcnt", 1, ClassUnary, typesInt},
	OpReal:                   {"real", 1, ClassUnary, typesFC},
	OpReducePrecision:        {"reduce-precision", 1, ClassUnary, TypesFloat},
	OpRoundNearestAfz:        {"round-nearest-afz", 1, ClassUnary, TypesFloat},
	OpRoundNearestEven:       {"round-nearest-even", 1, ClassUnary, TypesFloat},
	OpRsqrt:                  {"rsqrt", 1, ClassUnary, typesFC},
	OpSign:                   {"sign", 1, ClassUnary, typesSigned},
	OpSin:                    {"sine", 1, ClassUnary, typesFC},
	OpSinh:                   {"sinh", 1, ClassUnary, typesFC},
	OpSqrt:                   {"sqrt", 1, ClassUnary, typesFC},
	OpTan:                    {"tan", 1, ClassUnary, typesFC},
	OpTanh:                   {"tanh", 1, ClassUnary, typesFC},
	OpAdd:                    {"add", 2, ClassBinary, 0},
	OpAnd:                    {"and", 2, ClassBinary, typesLogical},
	OpAtan2:                  {"atan2", 2, ClassBinary, typesFC},
	OpCompare:                {"compare", 2, ClassBinary, 0},
	OpComplex:                {"complex", 2, ClassBinary, TypesFloat},
	OpDivide:                 {"divide", 2, ClassBinary, typesNumeric},
	OpMaximum:                {"maximum", 2, ClassBinary, 0},
	OpMinimum:                {"minimum", 2, ClassBinary, 0},
	OpMultiply:               {"multiply", 2, ClassBinary, 0},
	OpOr:                     {"or", 2, ClassBinary, typesLogical},
	OpPower:                  {"power", 2, ClassBinary, typesNumeric},
	OpRemainder:              {"remainder", 2, ClassBinary, typesNumeric},
	OpShiftLeft:              {"shift-left", 2, ClassBinary, typesInt},
	OpShiftRightArithmetic:   {"shift-right-arithmetic", 2, ClassBinary, typesInt},
	OpShiftRightLogical:      {"shift-right-logical", 2, ClassBinary, typesInt},
	OpSubtract:               {"subtract", 2, ClassBinary, typesNumeric},
	OpXor:                    {"xor", 2, ClassBinary, typesLogical},
	OpClamp:                  {"clamp", 3, ClassTernary, 0},
	OpSelect:                 {"select", 3, ClassTernary, 0},
	OpAddDependency:          {"add-dependency", 2, ClassOther, 0},
	OpAfterAll:               {"after-all", -1, ClassOther, 0},
	OpAllGather:              {"all-gather", -1, ClassOther, 0},
	OpAllGatherDone:          {"all-gather-done", 1, ClassOther, 0},
	OpAllGatherStart:         {"all-gather-start", -1, ClassOther, 0},
	OpAllReduce:              {"all-reduce", -1, ClassOther, 0},
	OpAllReduceDone:          {"all-reduce-done", 1, ClassOther, 0},
	OpAllReduceStart:         {"all-reduce-start", -1, ClassOther, 0},
	OpAllToAll:               {"all-to-all", -1, ClassOther, 0},
	OpAsyncDone:              {"async-done", 1, ClassOther, 0},
	OpAsyncStart:             {"async-start", -1, ClassOther, 0},
	OpAsyncUpdate:            {"async-update", 1, ClassOther, 0},
	OpBatchNormGrad:          {"batch-norm-grad", 5, ClassOther, 0},
	OpBatchNormInference:     {"batch-norm-inference", 5, ClassOther, 0},
	OpBatchNormTraining:      {"batch-norm-training", 3, ClassOther, 0},
	OpBitcast:                {"bitcast", 1, ClassOther, 0},
	OpBroadcast:              {"broadcast", 1, ClassOther, 0},
	OpCall:                   {"call", -1, ClassOther, 0},
	OpCholesky:               {"cholesky", 1, ClassOther, 0},
	OpCollectiveBroadcast:    {"collective-broadcast", -1, ClassOther, 0},
	OpCollectivePermute:      {"collective-permute", -1, ClassOther, 0},
	OpCollectivePermuteDone:  {"collective-permute-done", 1, ClassOther, 0},
	OpCollectivePermuteStart: {"collective-permute-start", -1, ClassOther, 0},
	OpConcatenate:            {"concatenate", -1, ClassOther, 0},
	OpConditional:            {"conditional", -1, ClassOther, 0},
	OpConstant:               {"constant", 0, ClassOther, 0},
	OpConvolution:            {"convolution", 2, ClassOther, 0},
	OpCopyDone:               {"copy-done", 1, ClassOther, 0},
	OpCopyStart:              {"copy-start", 1, ClassOther, 0},
	OpCustomCall:             {"custom-call", -1, ClassOther, 0},
	OpDomain:                 {"domain", 1, ClassOther, 0},
	OpDot:                    {"dot", 2, ClassOther, 0},
	OpDynamicReshape:         {"dynamic-reshape", -1, ClassOther, 0},
	OpDynamicSlice:           {"dynamic-slice", -1, ClassOther, 0},
	OpDynamicUpdateSlice:     {"dynamic-update-slice", -1, ClassOther, 0},
	OpFft:                    {"fft", 1, ClassOther, 0},
	OpFusion:                 {"fusion", -1, ClassOther, 0},
	OpGather:                 {"gather", 2, ClassOther, 0},
	OpGetDimensionSize:       {"get-dimension-size", 1, ClassOther, 0},
	OpGetTupleElement:        {"get-tuple-element", 1, ClassOther, 0},
	OpInfeed:                 {"infeed", 1, ClassOther, 0},
	OpIota:                   {"iota", 0, ClassOther, 0},
	OpMap:                    {"map", -1, ClassOther, 0},
	OpOptimizationBarrier:    {"opt-barrier", 1, ClassOther, 0},
	OpOutfeed:                {"outfeed", 2, ClassOther, 0},
	OpPad:                    {"pad", 2, ClassOther, 0},
	OpParameter:              {"parameter", 0, ClassOther, 0},
	OpPartitionID:            {"partition-id", 0, ClassOther, 0},
	OpRaggedAllToAll:         {"ragged-all-to-all", -1, ClassOther, 0},
	OpRaggedDot:              {"ragged-dot", 3, ClassOther, 0},
	OpRecv:                   {"recv", 1, ClassOther, 0},
	OpRecvDone:               {"recv-done", 1, ClassOther, 0},
	OpReduce:                 {"reduce", -1, ClassOther, 0},
	OpReduceScatter:          {"reduce-scatter", -1, ClassOther, 0},
	OpReduceWindow:           {"reduce-window", -1, ClassOther, 0},
	OpReplicaID:              {"replica-id", 0, ClassOther, 0},
	OpReshape:                {"reshape", 1, ClassOther, 0},
	OpReverse:                {"reverse", 1, ClassOther, 0},
	OpScan:                   {"scan", -1, ClassOther, 0},
	OpRngBitGenerator:        {"rng-bit-generator", 1, ClassOther, 0},
	OpRng:                    {"rng", 2, ClassOther, 0},
	OpRngGetAndUpdateState:   {"rng-get-and-update-state", 0, ClassOther, 0},
	OpScatter:                {"scatter", -1, ClassOther, 0},
	OpSelectAndScatter:       {"select-and-scatter", 3, ClassOther, 0},
	OpSend:                   {"send", 2, ClassOther, 0},
	OpSendDone:               {"send-done", 1, ClassOther, 0},
	OpSetDimensionSize:       {"set-dimension-size", 2, ClassOther, 0},
	OpSlice:                  {"slice", 1, ClassOther, 0},
	OpSort:                   {"sort", -1, ClassOther, 0},
	OpStochasticConvert:      {"stochastic-convert", 2, ClassOther, 0},
	OpTopK:                   {"topk", 1, ClassOther, 0},
	OpTranspose:              {"transpose", 1, ClassOther, 0},
	OpTriangularSolve:        {"triangular-solve", 2, ClassOther, 0},
	OpTuple:                  {"tuple", -1, ClassOther, 0},
	OpWhile:                  {"while", 1, ClassOther, 0},
}

var opByName = func() map[string]Opcode {
	m := map[string]Opcode{}
	for op := OpInvalid + 1; op < numOpcodes; op++ {
		if opTable[op].name == "" {
			panic(fmt.Sprintf("hlo: opcode %d has no table row", op))
		}
		m[opTable[op].name] = op
	}
	return m
}()

// LookupOpcode finds an opcode by its HLO spelling.
func LookupOpcode(name string) (Opcode, bool) {
	op, ok := opByName[name]
	return op, ok
}

func (op Opcode) String() string {
	if op < numOpcodes {
		return opTable[op].name
	}
	return fmt.Sprintf("Opcode(%d)", op)
}

// Arity is the operand count the op takes, or -1 for any number.
func (op Opcode) Arity() int { return opTable[op].arity }

// Class says whether the op is elementwise and with how many operands.
func (op Opcode) Class() OpClass { return opTable[op].class }

// Types is the set of element type kinds an elementwise op's operands
// may have (select's and clamp's: any; 0 means any).
func (op Opcode) Types() TypeSet { return opTable[op].types }

// CHLOFunctions are the opcodes of CHLO's functions that XLA's HLO text
// has: XLA's expanders rewrite them into elementwise ops, as lower does
// through hlo/chlo. The one list of them; whoever treats them alike
// (the expansion, the evaluator's tolerances, the test generators)
// reads it.
var CHLOFunctions = []Opcode{OpSinh, OpCosh, OpAsin, OpAcos, OpAsinh, OpAcosh, OpAtanh}

// IsElementwise reports an op computed independently per element.
func (op Opcode) IsElementwise() bool { return opTable[op].class != ClassOther }
