export {
  ToonRenderer,
  type ToonRendererOptions,
  type ToonValue,
  toObject,
  toToonValue,
} from './toon-renderer';
