export {
  defineRendererConformance,
  type RendererConformanceOptions,
} from './renderer/define-renderer-conformance';
export { rendererSampleFragments } from './renderer/renderer-sample';
