// SPDX-License-Identifier: MIT
//
// usage: node k8s-policy.mjs MODULES_DIR DAEMONSET_MANIFEST
//
// What extresd(8) (KUBERNETES) promises of the DaemonSet, beyond the schema: it is
// scheduled by Node Feature Discovery's PCI vendor labels for NVIDIA and
// AMD, or the override label, each enough alone; every container, init
// containers included, has requests equal to limits for cpu and memory
// (Guaranteed QoS); the Bidirectional mount is on a privileged container
// (the API refuses it elsewhere) with a read-only root; no API token.
// Prints one line per broken promise and exits 1 if there was any.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const [modules, file] = process.argv.slice(2);
if (!modules || !file) {
  console.error('usage: node k8s-policy.mjs MODULES_DIR DAEMONSET_MANIFEST');
  process.exit(2);
}
const require = createRequire(join(modules, 'node_modules', 'x.js'));
const YAML = require('yaml');

const problems = [];
const sets = YAML.parseAllDocuments(readFileSync(file, 'utf8'))
  .map((d) => d.toJSON()).filter((o) => o?.kind === 'DaemonSet');
if (sets.length !== 1)
  problems.push(`${sets.length} DaemonSets, wanted 1`);

for (const ds of sets) {
  const spec = ds.spec?.template?.spec ?? {};
  const terms = spec.affinity?.nodeAffinity
    ?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  // A label that alone admits a node: a term of one expression on it.
  const alone = new Set(terms.filter((t) => (t.matchExpressions ?? []).length === 1 &&
      !t.matchFields && t.matchExpressions[0].operator === 'In' &&
      t.matchExpressions[0].values?.includes('true'))
    .map((t) => t.matchExpressions[0].key));
  for (const label of ['feature.node.kubernetes.io/pci-10de.present',
    'feature.node.kubernetes.io/pci-1002.present', 'nvidia.com/gpu.present'])
    if (!alone.has(label))
      problems.push(`nodeAffinity: no term that admits a node by ${label}=true alone`);
  if (spec.nodeSelector)
    problems.push(`nodeSelector ${JSON.stringify(spec.nodeSelector)} is ANDed with every affinity term`);
  if (spec.automountServiceAccountToken !== false)
    problems.push('automountServiceAccountToken is not false');

  const containers = [...(spec.initContainers ?? []).map((c) => ['initContainer', c]),
    ...(spec.containers ?? []).map((c) => ['container', c])];
  for (const [what, c] of containers) {
    const where = `${what} ${c.name}`;
    for (const r of ['cpu', 'memory']) {
      const req = c.resources?.requests?.[r];
      const lim = c.resources?.limits?.[r];
      if (req === undefined || lim === undefined || String(req) !== String(lim))
        problems.push(`${where}: ${r} request ${req} and limit ${lim} differ (not Guaranteed QoS)`);
    }
    const sc = c.securityContext ?? {};
    const bidi = (c.volumeMounts ?? []).filter((m) => m.mountPropagation === 'Bidirectional');
    if (bidi.length && sc.privileged !== true)
      problems.push(`${where}: Bidirectional mount ${bidi[0].name} on an unprivileged container`);
    if (sc.readOnlyRootFilesystem !== true)
      problems.push(`${where}: root file system not read-only`);
  }
}
problems.forEach((p) => console.log(`${file}: ${p}`));
process.exit(problems.length ? 1 : 0);
