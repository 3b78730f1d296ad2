// A test plugin that consumes mod_muc's MucApi and hands it to the test running in the same process, so that
// the tests call the real service the way mod_muc_admin does (ctx.use(mucService)).
const MUC = { id: 'mod_muc.muc', provider: 'mod_muc' };

export default {
  name: 'mod_muc_probe',
  version: '1.0.0',
  pluginApi: '^0.1.0',
  summary: 'Hands MucApi to the MUC tests',
  consumes: [MUC],
  start(ctx) {
    globalThis.mucProbeApi = ctx.use(MUC);
    return { stop: () => { delete globalThis.mucProbeApi; } };
  },
};
