// SPDX-License-Identifier: MIT
//
// usage: node k8s-validate.mjs MODULES_DIR MANIFEST...
//
// Validates every object of every YAML manifest against the Kubernetes
// OpenAPI schema, strictly: kubernetes-models checks types, formats
// (quantities), enums and required fields, but lets unknown fields pass,
// as the API server does when it drops them silently; the model table of
// @kubernetes/client-node (generated from the same OpenAPI document)
// names every field a type has, so a misspelt field is an error here.
// Prints one line per problem, "FILE: document N (Kind/name): PATH: why",
// and exits 1 if there was any.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [modules, ...files] = process.argv.slice(2);
if (!modules || files.length === 0) {
  console.error('usage: node k8s-validate.mjs MODULES_DIR MANIFEST...');
  process.exit(2);
}
const require = createRequire(join(modules, 'node_modules', 'x.js'));
const YAML = require('yaml');
const k8s = await import(pathToFileURL(
  require.resolve('@kubernetes/client-node')).href);

// "apps/v1" + "DaemonSet" -> the client's V1DaemonSet model.
function modelName(apiVersion, kind) {
  const version = apiVersion.split('/').pop();
  return version[0].toUpperCase() + version.slice(1) + kind;
}

// Every field of OBJ (of the client model type TYPE) that the schema does
// not know, with its path.
function unknownFields(obj, type, path, out) {
  if (obj === null || obj === undefined)
    return;
  let m = /^Array<(.+)>$/.exec(type);
  if (m) {
    if (Array.isArray(obj))
      obj.forEach((v, i) => unknownFields(v, m[1], `${path}[${i}]`, out));
    return;
  }
  m = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (m) {
    if (typeof obj === 'object' && !Array.isArray(obj))
      for (const [k, v] of Object.entries(obj))
        unknownFields(v, m[1], `${path}.${k}`, out);
    return;
  }
  const model = k8s[type];
  if (!model || !Array.isArray(model.attributeTypeMap) ||
      typeof obj !== 'object' || Array.isArray(obj))
    return; // a scalar, IntOrString, or a wrong type kubernetes-models reports
  const fields = new Map(model.attributeTypeMap.map((a) => [a.baseName, a.type]));
  for (const [k, v] of Object.entries(obj)) {
    if (fields.has(k))
      unknownFields(v, fields.get(k), `${path}.${k}`, out);
    else
      out.push(`${path}.${k}: unknown field (${type} has ${[...fields.keys()].join(', ')})`);
  }
}

function validate(obj) {
  const problems = [];
  if (!obj || typeof obj !== 'object' || !obj.apiVersion || !obj.kind)
    return ['not a Kubernetes object (no apiVersion or kind)'];
  const [group, version] = obj.apiVersion.includes('/')
    ? obj.apiVersion.split('/') : [null, obj.apiVersion];
  let Model;
  try {
    Model = require(`kubernetes-models/${group ? group + '/' : ''}${version}/${obj.kind}`)[obj.kind];
  } catch {
    return [`unknown apiVersion/kind ${obj.apiVersion}/${obj.kind}`];
  }
  try {
    new Model(obj).validate();
  } catch (e) {
    problems.push(...String(e.message).split(', ').map((s) => s.replace(/^data/, '')));
  }
  const type = modelName(obj.apiVersion, obj.kind);
  if (!k8s[type]?.attributeTypeMap)
    problems.push(`no field table for ${type}`);
  else
    unknownFields(obj, type, '', problems);
  return problems;
}

let bad = 0;
for (const file of files) {
  const docs = YAML.parseAllDocuments(readFileSync(file, 'utf8'));
  docs.forEach((doc, i) => {
    const where = `${file}: document ${i + 1}`;
    if (doc.errors.length) {
      doc.errors.forEach((e) => console.log(`${where}: YAML: ${e.message}`));
      bad++;
      return;
    }
    const obj = doc.toJSON();
    if (obj === null)
      return;
    const name = `${obj.kind}/${obj.metadata?.name}`;
    for (const p of validate(obj)) {
      console.log(`${where} (${name}): ${p}`);
      bad++;
    }
  });
}
process.exit(bad ? 1 : 0);
