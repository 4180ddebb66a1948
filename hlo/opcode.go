package hlo

import "fmt"

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
// count, and class. Parser, verifier, evaluator and lowering consult it.
var opTable = [numOpcodes]opInfo{
	OpInvalid:                {"invalid", 0, ClassOther},
	OpAbs:                    {"abs", 1, ClassUnary},
	OpAcos:                   {"acos", 1, ClassUnary},
	OpAcosh:                  {"acosh", 1, ClassUnary},
	OpAsin:                   {"asin", 1, ClassUnary},
	OpAsinh:                  {"asinh", 1, ClassUnary},
	OpAtanh:                  {"atanh", 1, ClassUnary},
	OpBitcastConvert:         {"bitcast-convert", 1, ClassUnary},
	OpCbrt:                   {"cbrt", 1, ClassUnary},
	OpCeil:                   {"ceil", 1, ClassUnary},
	OpClz:                    {"count-leading-zeros", 1, ClassUnary},
	OpConvert:                {"convert", 1, ClassUnary},
	OpCopy:                   {"copy", 1, ClassUnary},
	OpCos:                    {"cosine", 1, ClassUnary},
	OpCosh:                   {"cosh", 1, ClassUnary},
	OpErf:                    {"erf", 1, ClassUnary},
	OpExp:                    {"exponential", 1, ClassUnary},
	OpExpm1:                  {"exponential-minus-one", 1, ClassUnary},
	OpFloor:                  {"floor", 1, ClassUnary},
	OpImag:                   {"imag", 1, ClassUnary},
	OpIsFinite:               {"is-finite", 1, ClassUnary},
	OpLog:                    {"log", 1, ClassUnary},
	OpLog1p:                  {"log-plus-one", 1, ClassUnary},
	OpLogistic:               {"logistic", 1, ClassUnary},
	OpNegate:                 {"negate", 1, ClassUnary},
	OpNot:                    {"not", 1, ClassUnary},
	OpPopcnt:                 {"popcnt", 1, ClassUnary},
	OpReal:                   {"real", 1, ClassUnary},
	OpReducePrecision:        {"reduce-precision", 1, ClassUnary},
	OpRoundNearestAfz:        {"round-nearest-afz", 1, ClassUnary},
	OpRoundNearestEven:       {"round-nearest-even", 1, ClassUnary},
	OpRsqrt:                  {"rsqrt", 1, ClassUnary},
	OpSign:                   {"sign", 1, ClassUnary},
	OpSin:                    {"sine", 1, ClassUnary},
	OpSinh:                   {"sinh", 1, ClassUnary},
	OpSqrt:                   {"sqrt", 1, ClassUnary},
	OpTan:                    {"tan", 1, ClassUnary},
	OpTanh:                   {"tanh", 1, ClassUnary},
	OpAdd:                    {"add", 2, ClassBinary},
	OpAnd:                    {"and", 2, ClassBinary},
	OpAtan2:                  {"atan2", 2, ClassBinary},
	OpCompare:                {"compare", 2, ClassBinary},
	OpComplex:                {"complex", 2, ClassBinary},
	OpDivide:                 {"divide", 2, ClassBinary},
	OpMaximum:                {"maximum", 2, ClassBinary},
	OpMinimum:                {"minimum", 2, ClassBinary},
	OpMultiply:               {"multiply", 2, ClassBinary},
	OpOr:                     {"or", 2, ClassBinary},
	OpPower:                  {"power", 2, ClassBinary},
	OpRemainder:              {"remainder", 2, ClassBinary},
	OpShiftLeft:              {"shift-left", 2, ClassBinary},
	OpShiftRightArithmetic:   {"shift-right-arithmetic", 2, ClassBinary},
	OpShiftRightLogical:      {"shift-right-logical", 2, ClassBinary},
	OpSubtract:               {"subtract", 2, ClassBinary},
	OpXor:                    {"xor", 2, ClassBinary},
	OpClamp:                  {"clamp", 3, ClassTernary},
	OpSelect:                 {"select", 3, ClassTernary},
	OpAddDependency:          {"add-dependency", 2, ClassOther},
	OpAfterAll:               {"after-all", -1, ClassOther},
	OpAllGather:              {"all-gather", -1, ClassOther},
	OpAllGatherDone:          {"all-gather-done", 1, ClassOther},
	OpAllGatherStart:         {"all-gather-start", -1, ClassOther},
	OpAllReduce:              {"all-reduce", -1, ClassOther},
	OpAllReduceDone:          {"all-reduce-done", 1, ClassOther},
	OpAllReduceStart:         {"all-reduce-start", -1, ClassOther},
	OpAllToAll:               {"all-to-all", -1, ClassOther},
	OpAsyncDone:              {"async-done", 1, ClassOther},
	OpAsyncStart:             {"async-start", -1, ClassOther},
	OpAsyncUpdate:            {"async-update", 1, ClassOther},
	OpBatchNormGrad:          {"batch-norm-grad", 5, ClassOther},
	OpBatchNormInference:     {"batch-norm-inference", 5, ClassOther},
	OpBatchNormTraining:      {"batch-norm-training", 3, ClassOther},
	OpBitcast:                {"bitcast", 1, ClassOther},
	OpBroadcast:              {"broadcast", 1, ClassOther},
	OpCall:                   {"call", -1, ClassOther},
	OpCholesky:               {"cholesky", 1, ClassOther},
	OpCollectiveBroadcast:    {"collective-broadcast", -1, ClassOther},
	OpCollectivePermute:      {"collective-permute", -1, ClassOther},
	OpCollectivePermuteDone:  {"collective-permute-done", 1, ClassOther},
	OpCollectivePermuteStart: {"collective-permute-start", -1, ClassOther},
	OpConcatenate:            {"concatenate", -1, ClassOther},
	OpConditional:            {"conditional", -1, ClassOther},
	OpConstant:               {"constant", 0, ClassOther},
	OpConvolution:            {"convolution", 2, ClassOther},
	OpCopyDone:               {"copy-done", 1, ClassOther},
	OpCopyStart:              {"copy-start", 1, ClassOther},
	OpCustomCall:             {"custom-call", -1, ClassOther},
	OpDomain:                 {"domain", 1, ClassOther},
	OpDot:                    {"dot", 2, ClassOther},
	OpDynamicReshape:         {"dynamic-reshape", -1, ClassOther},
	OpDynamicSlice:           {"dynamic-slice", -1, ClassOther},
	OpDynamicUpdateSlice:     {"dynamic-update-slice", -1, ClassOther},
	OpFft:                    {"fft", 1, ClassOther},
	OpFusion:                 {"fusion", -1, ClassOther},
	OpGather:                 {"gather", 2, ClassOther},
	OpGetDimensionSize:       {"get-dimension-size", 1, ClassOther},
	OpGetTupleElement:        {"get-tuple-element", 1, ClassOther},
	OpInfeed:                 {"infeed", 1, ClassOther},
	OpIota:                   {"iota", 0, ClassOther},
	OpMap:                    {"map", -1, ClassOther},
	OpOptimizationBarrier:    {"opt-barrier", 1, ClassOther},
	OpOutfeed:                {"outfeed", 2, ClassOther},
	OpPad:                    {"pad", 2, ClassOther},
	OpParameter:              {"parameter", 0, ClassOther},
	OpPartitionID:            {"partition-id", 0, ClassOther},
	OpRaggedAllToAll:         {"ragged-all-to-all", -1, ClassOther},
	OpRaggedDot:              {"ragged-dot", 3, ClassOther},
	OpRecv:                   {"recv", 1, ClassOther},
	OpRecvDone:               {"recv-done", 1, ClassOther},
	OpReduce:                 {"reduce", -1, ClassOther},
	OpReduceScatter:          {"reduce-scatter", -1, ClassOther},
	OpReduceWindow:           {"reduce-window", -1, ClassOther},
	OpReplicaID:              {"replica-id", 0, ClassOther},
	OpReshape:                {"reshape", 1, ClassOther},
	OpReverse:                {"reverse", 1, ClassOther},
	OpScan:                   {"scan", -1, ClassOther},
	OpRngBitGenerator:        {"rng-bit-generator", 1, ClassOther},
	OpRng:                    {"rng", 2, ClassOther},
	OpRngGetAndUpdateState:   {"rng-get-and-update-state", 0, ClassOther},
	OpScatter:                {"scatter", -1, ClassOther},
	OpSelectAndScatter:       {"select-and-scatter", 3, ClassOther},
	OpSend:                   {"send", 2, ClassOther},
	OpSendDone:               {"send-done", 1, ClassOther},
	OpSetDimensionSize:       {"set-dimension-size", 2, ClassOther},
	OpSlice:                  {"slice", 1, ClassOther},
	OpSort:                   {"sort", -1, ClassOther},
	OpStochasticConvert:      {"stochastic-convert", 2, ClassOther},
	OpTopK:                   {"topk", 1, ClassOther},
	OpTranspose:              {"transpose", 1, ClassOther},
	OpTriangularSolve:        {"triangular-solve", 2, ClassOther},
	OpTuple:                  {"tuple", -1, ClassOther},
	OpWhile:                  {"while", 1, ClassOther},
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

// IsElementwise reports an op computed independently per element.
func (op Opcode) IsElementwise() bool { return opTable[op].class != ClassOther }
