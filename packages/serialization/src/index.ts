export { builtinFragmentTypes } from './builtin-fragment-types';
export {
  decodeSerializedValue,
  defaultSerializer,
  encodeSerializedValue,
  fromFragment,
  toFragment,
} from './default-serializer';
export {
  createSerializer,
  FragmentSerializer,
  GROUP_TYPE,
  MAX_SERIALIZED_DEPTH,
  type SerializedOf,
  type SerializerOptions,
} from './fragment-serializer';
export {
  defineFragmentType,
  type FragmentTypeDefinition,
  type SerializationContext,
  type SerializedFragmentBase,
} from './fragment-type-definition';
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
