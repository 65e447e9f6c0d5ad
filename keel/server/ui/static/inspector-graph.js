// The Inspector's agent graph: the Mermaid flowchart `keel graph` prints
// (keel/project/graph.py), read back and drawn as HTML, one box per step. Mermaid itself is
// not bundled: its renderer adds inline styles, which the pages' Content-Security-Policy
// (`default-src 'self'`) refuses. The text is the restricted form graph.py writes:
// `subgraph ID["label"]` / `end` for skills and blocks, `ID["step<br/>what"]` and
// `ID(["END"])` nodes, `-->`, `-->|"cond"|`, `-. call .->` and `== link ==>` edges, and
// `class ID current` for the highlighted step. Pure: no requests.
import { el } from "./api.js";

const SUBGRAPH = /^subgraph (\S+)\["(.*)"\]$/;
const NODE = /^(\S+?)(\["(.*)"\]|\(\["(.*)"\]\))$/;
const EDGE = /^(\S+) (-->\|"(.*)"\||-->|-\. call \.->|== link ==>) (\S+)$/;
const CURRENT = /^class (\S+) current$/;

const unquote = (text) => text.replaceAll("#quot;", '"');

/** The graph of Mermaid `text`: {skills: [{id, label, blocks, nodes}], nodes: Map, edges: Map, current}. */
export function parseGraph(text) {
  const skills = [];
  const nodes = new Map(); // id -> {id, name, what, end, skill, block}
  const groups = new Map(); // subgraph id -> {label, skill}
  const edges = new Map(); // from id -> [{kind, label, to}]
  const open = [];
  let current = null;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line || line.startsWith("flowchart") || line.startsWith("classDef")) continue;
    let match = line.match(SUBGRAPH);
    if (match) {
      const label = unquote(match[2]);
      if (!open.length) {
        const skill = { id: match[1], label, blocks: [], nodes: [] };
        skills.push(skill);
        groups.set(match[1], { label, skill });
        open.push({ skill });
      } else {
        const { skill } = open[0];
        const block = { id: match[1], label, nodes: [] };
        skill.blocks.push(block);
        groups.set(match[1], { label, skill, block });
        open.push({ skill, block });
      }
      continue;
    }
    if (line === "end") {
      open.pop();
      continue;
    }
    if ((match = line.match(CURRENT))) {
      current = match[1];
      continue;
    }
    if ((match = line.match(EDGE))) {
      const kind = match[2].startsWith("-->") ? "next" : match[2].includes("call") ? "call" : "link";
      const list = edges.get(match[1]) || [];
      list.push({ kind, label: match[3] === undefined ? null : unquote(match[3]), to: match[4] });
      edges.set(match[1], list);
      continue;
    }
    if ((match = line.match(NODE)) && open.length) {
      const end = match[4] !== undefined;
      const [name, what] = unquote(end ? match[4] : match[3]).split("<br/>");
      const at = open.at(-1);
      const node = { id: match[1], name, what: what || "", end, skill: at.skill, block: at.block || null };
      nodes.set(node.id, node);
      (at.block || at.skill).nodes.push(node);
    }
  }
  return { skills, nodes, groups, edges, current };
}

/** The name a target id is shown by: a step (in its block), a block or a skill. */
function targetName(graph, id, from) {
  const node = graph.nodes.get(id);
  if (node) return node.block === from.block ? node.name : `${node.block ? node.block.label : node.skill.label} · ${node.name}`;
  const group = graph.groups.get(id);
  return group ? group.label : id.replace(/^(skill|b)_/, "");
}

function edgeItems(graph, node, next) {
  const items = [];
  for (const edge of graph.edges.get(node.id) || []) {
    if (edge.kind === "next" && edge.label === null && next && edge.to === next.id) continue; // the arrow below
    const to = targetName(graph, edge.to, node);
    let kind = "next";
    if (edge.kind === "call") kind = "calls";
    else if (edge.kind === "link") kind = "links to";
    else if (edge.label === "else") kind = "else";
    else if (edge.label !== null) kind = `if ${edge.label}`;
    items.push(el("li", {}, el("span", { className: "edge-kind", text: kind }), ` → ${to}`));
  }
  return items;
}

function stepItem(graph, node, next) {
  const isCurrent = node.id === graph.current;
  const box = el(
    "div",
    {
      className: `graph-node${node.end ? " graph-end" : ""}${isCurrent ? " graph-current" : ""}`,
      id: `graph-${node.id}`,
      "aria-current": isCurrent ? "step" : undefined,
    },
    el("strong", { text: node.name }),
    node.what ? el("span", { className: "graph-what", text: node.what }) : null,
    isCurrent ? el("span", { className: "visually-hidden", text: " (current step)" }) : null,
  );
  const edges = edgeItems(graph, node, next);
  const falls = (graph.edges.get(node.id) || []).some((e) => e.kind === "next" && e.label === null && next && e.to === next.id);
  return el(
    "li",
    { className: "graph-step" },
    box,
    edges.length ? el("ul", { className: "graph-edges", "aria-label": `Where ${node.name} goes` }, edges) : null,
    falls ? el("span", { className: "graph-arrow", "aria-hidden": "true", text: "↓" }) : null,
  );
}

function nodeList(graph, nodes, label) {
  return el("ol", { className: "graph-steps", "aria-label": label }, nodes.map((node, i) => stepItem(graph, node, nodes[i + 1])));
}

/** Fill `target` with the graph of Mermaid `text`; the current step's skill is opened. */
export function renderGraph(target, text) {
  const graph = parseGraph(text);
  const currentNode = graph.current ? graph.nodes.get(graph.current) : null;
  const parts = graph.skills.map((skill) => {
    const holds = currentNode && currentNode.skill === skill;
    const body = skill.blocks.length
      ? el("div", { className: "graph-blocks" }, skill.blocks.map((block) => el("div", { className: "graph-block" }, el("h4", { text: block.label }), nodeList(graph, block.nodes, `Steps of ${skill.label}, ${block.label}`))))
      : el("p", { className: "muted", text: "Prose only: no ordered blocks." });
    return el("details", { className: `graph-skill${holds ? " has-current" : ""}`, open: holds || graph.skills.length === 1 }, el("summary", { text: skill.label + (holds ? " · current" : "") }), body);
  });
  target.replaceChildren(...(parts.length ? parts : [el("p", { className: "muted", text: "The agent has no skills of its own." })]));
  return { current: currentNode, skills: graph.skills.length };
}
