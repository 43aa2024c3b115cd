export { builtinFragmentTypes } from './builtin-fragment-types';
export { MAX_SERIALIZED_DEPTH } from './conversion/walk';
export { createSerializer, type SerializerOptions } from './create-serializer';
export {
  decodeSerializedValue,
  defaultSerializer,
  encodeSerializedValue,
  fromFragment,
  toFragment,
} from './default-serializer';
export { FragmentSerializer } from './fragment-serializer';
export {
  defineFragmentType,
  type FragmentTypeDefinition,
  type SerializationContext,
  type SerializedFragmentBase,
  type SerializedOf,
} from './fragment-type-definition';
export { GROUP_TYPE } from './fragment-type-registry';
export {
  type SerializedBudgetField,
  type SerializedFragment,
  type SerializedFragmentOf,
  type SerializedFragmentType,
  type SerializedGroup,
  type SerializedGroupChild,
  serializedBudgetSchema,
  serializedFragmentSchema,
  serializedFragmentSchemas,
  serializedGroupSchema,
} from './schemas';
export { SerializationError } from './serialization-error';
