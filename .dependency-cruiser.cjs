// The layer order of src/ (docs/architecture.md): each folder imports only folders listed
// before it. Checked by `npm test` (stage "layers": depcruise src) and by
// test/architecture/layers.test.ts, which also proves a wrong-way import fails.
const LAYERS = ['protocol', 'shared', 'client', 'providers', 'runtime', 'store', 'http', 'extensions', 'host', 'cli'];

const layerRules = LAYERS.slice(0, -1).map((layer, index) => ({
  name: `layer-${layer}`,
  comment: `src/${layer}/ may import only ${LAYERS.slice(0, index).join(', ') || 'nothing else in src'}.`,
  severity: 'error',
  from: { path: `^src/${layer}/` },
  to: { path: `^src/(${LAYERS.slice(index + 1).join('|')})/` },
}));

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'no-package-root',
      comment: 'src/index.ts is the package entry; nothing inside src imports it.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^src/index\\.ts$' },
    },
    {
      name: 'no-circular',
      comment: 'No import cycles, type-only imports included.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};
