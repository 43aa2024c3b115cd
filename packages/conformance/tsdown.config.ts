import { libraryBuild } from '../../tooling/tsdown.base.ts';

// Three entries: the runtime-neutral kits, and the Node-only golden-file and process helpers.
export default libraryBuild({
  entry: {
    index: 'src/index.ts',
    'golden/index': 'src/golden/index.ts',
    'process/index': 'src/process/index.ts',
  },
});
