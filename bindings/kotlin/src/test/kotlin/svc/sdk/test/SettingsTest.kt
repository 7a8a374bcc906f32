package svc.sdk.test

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import svc.sdk.SettingsTree
import svc.sdk.SvcException
import svc.sdk.settingsDiff

class SettingsTest {
    private val old = """{"a":{"b":1,"c":"x"},"d":[1,2]}"""
    private val new = """{"a":{"b":2,"c":"x"},"d":[1,2]}"""

    @Test
    fun `a diff crosses as JSON strings and comes back as a record`() {
        val patch = settingsDiff(old, new)
        assertEquals(listOf("a/b"), patch.changed)
        assertEquals("""{"a":{"b":2}}""", patch.tree)
        assertEquals(emptyList<String>(), patch.removed)
        // Not JSON: a typed error, not a crash.
        assertThrows<SvcException.InvalidInput> { settingsDiff("{", "{}") }
    }

    @Test
    fun `a fleet diffs each unit's text against a kept reference in one call`() {
        val reference = SettingsTree.fromJson(old)
        assertEquals(settingsDiff(old, new), reference.diffJson(new))
        val other = reference.diffJson("""{"a":{"b":1},"e":true}""")
        assertEquals(listOf("e"), other.changed)
        assertEquals(listOf("a/c", "d"), other.removed)
        assertThrows<SvcException.InvalidInput> { reference.diffJson("{") }
    }
}
