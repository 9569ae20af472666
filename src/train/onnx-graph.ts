/** Small builders for ONNX graphs written with onnx-proto (the trained model and the tiny test models). */
import onnxProto, { type onnx as Onnx } from 'onnx-proto';

const { onnx } = onnxProto;
const FLOAT = onnx.TensorProto.DataType.FLOAT;
const INT64 = onnx.TensorProto.DataType.INT64;

export function floatTensor(name: string, dims: number[], values: ArrayLike<number>): Onnx.ITensorProto {
  const bytes = new Uint8Array(values.length * 4);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < values.length; i++) view.setFloat32(i * 4, values[i]!, true);
  return { name, dims, dataType: FLOAT, rawData: bytes };
}

export function int64Tensor(name: string, dims: number[], values: number[]): Onnx.ITensorProto {
  const bytes = new Uint8Array(values.length * 8);
  const view = new DataView(bytes.buffer);
  values.forEach((value, i) => view.setBigInt64(i * 8, BigInt(value), true));
  return { name, dims, dataType: INT64, rawData: bytes };
}

export function valueInfo(name: string, elemType: number, dims: Array<string | number>): Onnx.IValueInfoProto {
  return {
    name,
    type: {
      tensorType: { elemType, shape: { dim: dims.map((dim) => (typeof dim === 'string' ? { dimParam: dim } : { dimValue: dim })) } },
    },
  };
}

export function intAttribute(name: string, value: number): Onnx.IAttributeProto {
  return { name, type: onnx.AttributeProto.AttributeType.INT, i: value };
}

export function node(opType: string, input: string[], output: string, attribute: Onnx.IAttributeProto[] = []): Onnx.INodeProto {
  return { opType, input, output: [output], name: `${opType}_${output}`, attribute };
}
