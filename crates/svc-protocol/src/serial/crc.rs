//! CRC-16/KERMIT, the checksum of sbgECom frames.

/// The reflected polynomial of CRC-16/KERMIT (0x1021 bit-reversed).
const POLY: u16 = 0x8408;

/// Slicing-by-8 tables: `TABLES[k][b]` is the CRC of byte `b` followed by `k` zero
/// bytes, starting from 0. `TABLES[0]` is the classic byte-at-a-time table.
static TABLES: [[u16; 256]; 8] = make_tables();

const fn make_tables() -> [[u16; 256]; 8] {
    let mut tables = [[0u16; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u16;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ POLY
            } else {
                crc >> 1
            };
            bit += 1;
        }
        tables[0][i] = crc;
        i += 1;
    }
    let mut i = 0;
    while i < 256 {
        let mut k = 1;
        while k < 8 {
            let previous = tables[k - 1][i];
            tables[k][i] = (previous >> 8) ^ tables[0][(previous & 0xFF) as usize];
            k += 1;
        }
        i += 1;
    }
    tables
}

/// CRC-16/KERMIT of `bytes`: reflected polynomial 0x8408, initial value 0, no final
/// XOR. Its check value, for the ASCII string `"123456789"`, is `0x2189`.
///
/// An sbgECom frame carries this CRC (little-endian) computed over its message id,
/// class, length and data. Never fails.
///
/// ```
/// assert_eq!(svc_protocol::serial::crc16_kermit(b"123456789"), 0x2189);
/// assert_eq!(svc_protocol::serial::crc16_kermit(b""), 0);
/// ```
#[must_use]
pub fn crc16_kermit(bytes: &[u8]) -> u16 {
    let t = &TABLES;
    let mut crc: u16 = 0;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let low = (crc as u8) ^ c[0];
        let high = ((crc >> 8) as u8) ^ c[1];
        crc = t[7][usize::from(low)]
            ^ t[6][usize::from(high)]
            ^ t[5][usize::from(c[2])]
            ^ t[4][usize::from(c[3])]
            ^ t[3][usize::from(c[4])]
            ^ t[2][usize::from(c[5])]
            ^ t[1][usize::from(c[6])]
            ^ t[0][usize::from(c[7])];
    }
    for &b in chunks.remainder() {
        crc = (crc >> 8) ^ t[0][usize::from((crc as u8) ^ b)];
    }
    crc
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition, one bit at a time.
    fn bitwise(bytes: &[u8]) -> u16 {
        let mut crc = 0u16;
        for &b in bytes {
            crc ^= u16::from(b);
            for _ in 0..8 {
                crc = if crc & 1 != 0 {
                    (crc >> 1) ^ POLY
                } else {
                    crc >> 1
                };
            }
        }
        crc
    }

    #[test]
    fn check_value() {
        assert_eq!(crc16_kermit(b"123456789"), 0x2189);
        assert_eq!(bitwise(b"123456789"), 0x2189);
        assert_eq!(crc16_kermit(&[]), 0);
    }

    #[test]
    fn slicing_by_8_matches_the_bitwise_definition() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let data: Vec<u8> = (0..300)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect();
        for start in 0..9 {
            for len in 0..(data.len() - start) {
                let slice = &data[start..start + len];
                assert_eq!(
                    crc16_kermit(slice),
                    bitwise(slice),
                    "start {start} len {len}"
                );
            }
        }
    }
}
