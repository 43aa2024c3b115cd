export {
  defineRendererConformance,
  type RendererConformanceOptions,
} from './renderer/define-renderer-conformance';
export { rendererSampleFragments } from './renderer/renderer-sample';
export {
  defineStoreConformance,
  type StoreConformanceOptions,
  type StoreFactoryContext,
} from './store/define-store-conformance';
export { uiMessageFixtures } from './store/ui-message-fixtures';
