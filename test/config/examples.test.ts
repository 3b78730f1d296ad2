/**
 * The example configuration files shipped at the root validate as they are, with the built-in modules:
 * config.example.yml (what `npm start` runs) and config.cluster.example.yml (one node of `npm run cluster`).
 * A rename of an option or a module would otherwise first show on a newcomer's machine.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { loadConfigFile } from '../../kernel/src/config/load.js';
import { ModuleCatalog } from '../../kernel/src/modules/catalog.js';
import { BUILTIN_MODULES_DIR, KERNEL_HANDLERS } from '../../kernel/src/server.js';
import { REPO } from '../support/process.js';

const context = { modules: (dataDir: string) => new ModuleCatalog(BUILTIN_MODULES_DIR, join(dataDir, 'plugins')), kernelHandlers: KERNEL_HANDLERS };

describe('the example configuration files', () => {
  it('config.example.yml enables every module but mod_antispam and mod_cluster, and validates', async () => {
    const config = await loadConfigFile(join(REPO, 'config.example.yml'), context);
    expect([...config.modules.keys()]).to.include.members(['mod_http_api', 'mod_admin_extra', 'mod_roster', 'mod_presence', 'mod_stream_mgmt']);
    expect([...config.modules.keys()]).to.not.include('mod_cluster');
  });

  it('config.cluster.example.yml is a node of a cluster on MariaDB, and validates', async () => {
    const config = await loadConfigFile(join(REPO, 'config.cluster.example.yml'), context);
    expect(config.node_name).to.equal('service@node1');
    expect(config.sql.type).to.equal('mysql');
    expect(config.modules.get('mod_cluster')).to.deep.include({ redis_url: 'redis://127.0.0.1:6379', cluster: 'service' });
  });
});
