import { libraryBuild } from '../../tooling/tsdown.base.ts';

// Two entries: the contracts and model, and the store kit for ContextStore implementers.
export default libraryBuild({
  entry: { index: 'src/index.ts', 'store-kit/index': 'src/store/kit/index.ts' },
});
