package svc.sdk.test

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.ArrayNode
import com.fasterxml.jackson.databind.node.BooleanNode
import com.fasterxml.jackson.databind.node.ObjectNode
import com.fasterxml.jackson.databind.node.TextNode
import java.io.File
import kotlin.random.Random
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Tag
import org.junit.jupiter.api.Test
import svc.sdk.SettingsTree
import svc.sdk.settingsDiff

/** The same result as the binding's `SettingsPatch`, computed in pure Kotlin with Jackson. */
data class KotlinPatch(val tree: String, val changed: List<String>, val removed: List<String>)

/**
 * The minimal patch between two JSON trees with Jackson: the partial tree, changed and
 * removed nodes. The path of a node is written only when it is reported (the keys on
 * the way down are kept in a list), as the binding does.
 */
fun kotlinDiff(mapper: ObjectMapper, oldText: String, newText: String): KotlinPatch {
    val changed = ArrayList<String>()
    val removed = ArrayList<String>()
    val keys = ArrayList<String>()
    fun here(key: String? = null): String {
        val path = StringBuilder()
        for (k in keys) path.append(k).append('/')
        if (key != null) path.append(key) else if (path.isNotEmpty()) path.setLength(path.length - 1)
        return path.toString()
    }
    fun walk(old: JsonNode, new: JsonNode): JsonNode? {
        if (old is ObjectNode && new is ObjectNode) {
            var out: ObjectNode? = null
            var found = 0
            for ((key, value) in new.properties()) {
                val before = old.get(key)
                val part = if (before == null) {
                    changed.add(here(key))
                    value
                } else {
                    found++
                    keys.add(key)
                    val part = walk(before, value)
                    keys.removeAt(keys.size - 1)
                    part
                }
                if (part != null) (out ?: mapper.createObjectNode().also { out = it }).set<JsonNode>(key, part)
            }
            // Keys are unique: when every key of `old` was found in `new`, none was removed.
            if (found < old.size()) {
                val names = old.fieldNames()
                while (names.hasNext()) {
                    val key = names.next()
                    if (!new.has(key)) removed.add(here(key))
                }
            }
            return out
        }
        if (old == new) return null
        changed.add(here())
        return new
    }
    val tree = walk(mapper.readTree(oldText), mapper.readTree(newText)) ?: mapper.createObjectNode()
    return KotlinPatch(mapper.writeValueAsString(tree), changed, removed)
}

/** The partial tree (JSON) from a parsed old tree to a parsed new one, with Jackson. */
fun kotlinDiffParsed(mapper: ObjectMapper, old: JsonNode, new: JsonNode): String {
    fun walk(old: JsonNode, new: JsonNode): JsonNode? {
        if (old is ObjectNode && new is ObjectNode) {
            var out: ObjectNode? = null
            for ((key, value) in new.properties()) {
                val before = old.get(key)
                val part = if (before == null) value else walk(before, value)
                if (part != null) (out ?: mapper.createObjectNode().also { out = it }).set<JsonNode>(key, part)
            }
            return out
        }
        return if (old == new) null else new
    }
    return mapper.writeValueAsString(walk(old, new) ?: mapper.createObjectNode())
}

/** A copy of `tree` with 1 % of its leaves changed (seeded): booleans flipped, numbers increased, strings changed, arrays' first item changed. */
fun changeOnePercent(mapper: ObjectMapper, text: String, seed: Int): String {
    val tree = mapper.readTree(text)
    val leaves = ArrayList<Pair<ObjectNode, String>>()
    fun collect(node: JsonNode) {
        if (node is ObjectNode) {
            for ((key, value) in node.properties()) {
                if (value is ObjectNode) collect(value) else leaves.add(node to key)
            }
        }
    }
    collect(tree)
    val wanted = maxOf(1, Math.round(leaves.size * 0.01).toInt())
    for ((parent, key) in leaves.shuffled(Random(seed)).take(wanted)) {
        val value = parent.get(key)
        val changed: JsonNode = when {
            value is BooleanNode -> BooleanNode.valueOf(!value.booleanValue())
            value.isNumber -> mapper.nodeFactory.numberNode(value.doubleValue() + 1.0)
            value is TextNode -> TextNode.valueOf(if (value.textValue() == "off") "10ms" else value.textValue() + "x")
            value is ArrayNode && value.size() > 0 && value[0].isNumber ->
                value.deepCopy().also { it.set(0, mapper.nodeFactory.numberNode(value[0].doubleValue() + 1.0)) }
            else -> TextNode.valueOf("changed")
        }
        parent.set<JsonNode>(key, changed)
    }
    return mapper.writeValueAsString(tree)
}

/**
 * The settings diff through the binding (two JSON strings in, the patch out: the
 * crossing and both parses included) against the same diff in pure Kotlin with
 * Jackson, on the unit's default tree with 1 % of its leaves changed: the ratio is
 * reported, not held to a target (an app runs a few diffs per user action). Run by
 * `cargo xtask kotlin-bench` against a release build of the library; excluded from
 * the normal test run.
 */
@Tag("bench")
class SettingsDiffBench {
    private fun median(samples: List<Double>) = samples.sorted()[samples.size / 2]

    /** Nanoseconds per call, `calls` calls in a row. */
    private inline fun timed(calls: Int, call: () -> Unit): Double {
        val start = System.nanoTime()
        repeat(calls) { call() }
        return (System.nanoTime() - start).toDouble() / calls
    }

    @Test
    fun `settings diff through the binding vs pure Kotlin`() {
        val mapper = ObjectMapper()
        val old = File(Paths.root, "crates/svc-test-support/src/settings/unit_default.json").readText()
        val new = changeOnePercent(mapper, old, seed = 42)

        // Both give the same patch.
        val ours = settingsDiff(old, new)
        val theirs = kotlinDiff(mapper, old, new)
        assertEquals(theirs.changed, ours.changed)
        assertEquals(mapper.readTree(theirs.tree), mapper.readTree(ours.tree))
        assertEquals(theirs.removed, ours.removed)

        // Warm-up, then alternating rounds in the same run. The binding's glue (a few
        // calls of each method per diff) reaches the JIT's last tier after several
        // thousand diffs.
        repeat(12) {
            timed(1_000) { settingsDiff(old, new) }
            timed(1_000) { kotlinDiff(mapper, old, new) }
        }
        val binding = ArrayList<Double>()
        val kotlin = ArrayList<Double>()
        repeat(15) {
            binding.add(timed(300) { settingsDiff(old, new) })
            kotlin.add(timed(300) { kotlinDiff(mapper, old, new) })
        }
        val b = median(binding) / 1000
        val k = median(kotlin) / 1000

        // Where the time goes: the call alone (two empty trees), and the fleet case (the
        // reference tree parsed once and kept; only the new tree crosses, as JSON).
        val floor = ArrayList<Double>()
        val encode = ArrayList<Double>()
        val fleetBinding = ArrayList<Double>()
        val fleetKotlin = ArrayList<Double>()
        val reference = SettingsTree.fromJson(old)
        val parsedOld = mapper.readTree(old)
        fun fleetOurs() = reference.diffJson(new).tree
        fun fleetTheirs() = kotlinDiffParsed(mapper, parsedOld, mapper.readTree(new))
        assertEquals(mapper.readTree(fleetTheirs()), mapper.readTree(fleetOurs()))
        // The fleet case's glue needs its own warm-up, as long as the diff's.
        repeat(2) {
            timed(1_000) { settingsDiff("{}", "{}") }
            timed(1_000) { old.toByteArray(Charsets.UTF_8); new.toByteArray(Charsets.UTF_8) }
        }
        repeat(12) {
            timed(1_000) { fleetOurs() }
            timed(1_000) { fleetTheirs() }
        }
        repeat(15) {
            floor.add(timed(1_000) { settingsDiff("{}", "{}") })
            encode.add(timed(1_000) { old.toByteArray(Charsets.UTF_8); new.toByteArray(Charsets.UTF_8) })
            fleetBinding.add(timed(300) { fleetOurs() })
            fleetKotlin.add(timed(300) { fleetTheirs() })
        }
        val f = median(floor) / 1000
        val e = median(encode) / 1000
        val fb = median(fleetBinding) / 1000
        val fk = median(fleetKotlin) / 1000
        val spread = { samples: List<Double> -> String.format("%.1f–%.1f", samples.min() / 1000, samples.max() / 1000) }
        val report = String.format(
            "settings_diff unit_default_1pct (%d changed nodes, %d bytes of JSON each): binding %.1f µs, Kotlin+Jackson %.1f µs, ratio %.2f×\n" +
                "  rounds of 300 calls: binding %s µs, Kotlin+Jackson %s µs\n" +
                "  a call with two empty trees: %.1f µs; both texts to UTF-8 bytes (as the binding sends them): %.1f µs\n" +
                "  fleet case (reference kept parsed, new tree as JSON; SettingsTree.diffJson): binding %.1f µs, Kotlin+Jackson %.1f µs, ratio %.2f×",
            ours.changed.size, old.length, b, k, k / b, spread(binding), spread(kotlin), f, e, fb, fk, fk / fb,
        )
        println(report)
        File(Paths.root, "target/kotlin-bench.txt").writeText(report + "\n")
        // The new tree as Jackson wrote it, to measure the Rust side alone on the same texts.
        File(Paths.root, "target/kotlin-bench-new.json").writeText(new)
    }
}
