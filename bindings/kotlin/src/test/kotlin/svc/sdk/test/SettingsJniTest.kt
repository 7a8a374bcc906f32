package svc.sdk.test

import com.fasterxml.jackson.databind.ObjectMapper
import java.io.File
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assumptions.assumeTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import svc.sdk.SettingsPatch
import svc.sdk.SvcException
import svc.sdk.settingsDiff

/**
 * `settingsDiff` goes over JNI first (see bindings/uniffi/src/jni.rs) for texts of the
 * same shape: the same patches as through JNA alone, the same typed errors (they take the
 * JNA call), from any thread, with the very library JNA loaded.
 */
class SettingsJniTest {
    /** `SettingsJni.loaded`, the switch between both ways (internal to the bindings). */
    private val loaded = Class.forName("svc.sdk.SettingsJni").getDeclaredField("loaded").also {
        it.isAccessible = true
    }

    /** `settingsDiff` through JNA alone. */
    private fun throughJna(old: String, new: String): SettingsPatch {
        val before = loaded.getBoolean(null)
        loaded.setBoolean(null, false)
        try {
            return settingsDiff(old, new)
        } finally {
            loaded.setBoolean(null, before)
        }
    }

    /** `SettingsJni.diff`: the JNI call alone (null: the uniffi call would run). */
    private fun throughJni(old: String, new: String): SettingsPatch? {
        val jni = Class.forName("svc.sdk.SettingsJni")
        val instance = jni.getDeclaredField("INSTANCE").get(null)
        val diff = jni.getDeclaredMethod("diff", String::class.java, String::class.java)
        diff.isAccessible = true
        return diff.invoke(instance, old, new) as SettingsPatch?
    }

    private val mapper = ObjectMapper()
    private val unit = File(Paths.root, "crates/svc-test-support/src/settings/unit_default.json").readText()

    @Test
    fun `texts of the same shape cross over JNI and give the patches JNA gives`() {
        assertTrue(loaded.getBoolean(null), "the JNI entry point is loaded, JNA's copy")
        val pairs = (1..20).map { seed -> unit to changeOnePercent(mapper, unit, seed) } + listOf(
            unit to unit,
            // Non-ASCII text, a key with an escape (inside an array: compared whole).
            """{"é": {"ü": "à"}, "a": [{"k\"ey": 1}]}""" to """{"é": {"ü": "ß"}, "a": [{"k\"ey": 2}]}""",
            "{}" to "{}",
        )
        for ((old, new) in pairs) {
            val jni = throughJni(old, new)
            assertEquals(throughJna(old, new), jni, "$old -> $new")
            assertEquals(jni, settingsDiff(old, new))
        }
        assertEquals(listOf("é/ü", "a"), throughJni(pairs[21].first, pairs[21].second)?.changed)
    }

    @Test
    fun `other shapes and texts that are not JSON take the uniffi call`() {
        // Keys added and removed, another order: the general diff, through JNA.
        val old = """{"a": {"b": 1, "c": "x"}, "d": [1, 2]}"""
        val new = """{"d":[1,3],"a":{"c":"é\n","e":null}}"""
        assertNull(throughJni(old, new))
        assertEquals(listOf("d", "a/c", "a/e"), settingsDiff(old, new).changed)
        assertEquals(listOf("a/b"), settingsDiff(old, new).removed)
        assertNull(throughJni("{", "{}"))
    }

    @Test
    fun `JNI uses the library JNA loaded, not another build of it`() {
        assumeTrue(File("/proc/self/maps").exists(), "a Linux process map")
        settingsDiff("{}", "{}")
        // The files of the library mapped into this process (`cargo xtask` runs the
        // tests with target/debug on LD_LIBRARY_PATH, where the JVM would find one).
        val mapped = File("/proc/self/maps").readLines()
            .map { it.substringAfterLast(' ') }
            .filter { it.endsWith("/libsvc_ffi.so") }
            .toSet()
        assertEquals(1, mapped.size, mapped.toString())
    }

    @Test
    fun `a text that is not JSON raises the typed error`() {
        for ((old, new, which) in listOf(
            Triple("{", "{}", "the old tree"),
            Triple("{}", """{"a": tru}""", "the new tree"),
            Triple("{}", "", "the new tree"),
        )) {
            val error = assertThrows<SvcException.InvalidInput> { settingsDiff(old, new) }
            assertTrue(error.reason.contains(which), error.reason)
        }
    }

    @Test
    fun `threads diffing at once each get their own patch`() {
        val pairs = (1..8).map { seed -> unit to changeOnePercent(mapper, unit, seed) }
        val expected = pairs.map { (old, new) -> throughJna(old, new) }
        val wrong = wrongOnThreads(8, 500, 120) { thread, i ->
            val at = (i + thread) % pairs.size
            settingsDiff(pairs[at].first, pairs[at].second) == expected[at]
        }
        assertEquals(List(8) { 0 }, wrong)
    }
}
