// A test plugin that consumes mod_pubsub's PepApi and hands it to the test running in the same process, so that
// the tests call the real service the way another module (mod_private's bookmarks bridge) would (ctx.use(pepService)).
const PEP = { id: 'mod_pubsub.pep', provider: 'mod_pubsub' };

export default {
  name: 'mod_pep_probe',
  version: '1.0.0',
  pluginApi: '^0.1.0',
  summary: 'Hands PepApi to the PEP tests',
  consumes: [PEP],
  start(ctx) {
    globalThis.pepProbeApi = ctx.use(PEP);
    return { stop: () => { delete globalThis.pepProbeApi; } };
  },
};
