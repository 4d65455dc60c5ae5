/*
 * hip-remote: HIP's vector-type operators for hipcc, in host and device code alike.
 * Generated (one block per type); the types stay hip_vector_types.h's C structs, so sizes and
 * layouts do not change. Component-wise, as HIP's: vector op vector, vector op scalar,
 * scalar op vector, compound assignment, unary minus, == and != (true when all / any components
 * differ), and for integer vectors also %, &, |, ^, <<, >>, ~.
 */
#ifndef HIP_REMOTE_DEVICE_VECTOR_OPS_H
#define HIP_REMOTE_DEVICE_VECTOR_OPS_H

#define __HIP_REMOTE_VFN static inline __attribute__((host, device, always_inline))

/* char1 */
__HIP_REMOTE_VFN char1& operator+=(char1& a, const char1& b) { a.x += b.x; return a; }
__HIP_REMOTE_VFN char1& operator+=(char1& a, char b) { a.x += b; return a; }
__HIP_REMOTE_VFN char1 operator+(char1 a, const char1& b) { return a += b; }
__HIP_REMOTE_VFN char1 operator+(char1 a, char b) { return a += b; }
__HIP_REMOTE_VFN char1 operator+(char a, const char1& b) { char1 r; r.x = (char)(a + b.x); return r; }
__HIP_REMOTE_VFN char1& operator-=(char1& a, const char1& b) { a.x -= b.x; return a; }
__HIP_REMOTE_VFN char1& operator-=(char1& a, char b) { a.x -= b; return a; }
__HIP_REMOTE_VFN char1 operator-(char1 a, const char1& b) { return a -= b; }
__HIP_REMOTE_VFN char1 operator-(char1 a, char b) { return a -= b; }
__HIP_REMOTE_VFN char1 operator-(char a, const char1& b) { char1 r; r.x = (char)(a - b.x); return r; }
__HIP_REMOTE_VFN char1& operator*=(char1& a, const char1& b) { a.x *= b.x; return a; }
__HIP_REMOTE_VFN char1& operator*=(char1& a, char b) { a.x *= b; return a; }
__HIP_REMOTE_VFN char1 operator*(char1 a, const char1& b) { return a *= b; }
__HIP_REMOTE_VFN char1 operator*(char1 a, char b) { return a *= b; }
__HIP_REMOTE_VFN char1 operator*(char a, const char1& b) { char1 r; r.x = (char)(a * b.x); return r; }
__HIP_REMOTE_VFN char1& operator/=(char1& a, const char1& b) { a.x /= b.x; return a; }
__HIP_REMOTE_VFN char1& operator/=(char1& a, char b) { a.x /= b; return a; }
__HIP_REMOTE_VFN char1 operator/(char1 a, const char1& b) { return a /= b; }
__HIP_REMOTE_VFN char1 operator/(char1 a, char b) { return a /= b; }
__HIP_REMOTE_VFN char1 operator/(char a, const char1& b) { char1 r; r.x = (char)(a / b.x); return r; }
__HIP_REMOTE_VFN char1& operator%=(char1& a, const char1& b) { a.x %= b.x; return a; }
__HIP_REMOTE_VFN char1& operator%=(char1& a, char b) { a.x %= b; return a; }
__HIP_REMOTE_VFN char1 operator%(char1 a, const char1& b) { return a %= b; }
__HIP_REMOTE_VFN char1 operator%(char1 a, char b) { return a %= b; }
__HIP_REMOTE_VFN char1 operator%(char a, const char1& b) { char1 r; r.x = (char)(a % b.x); return r; }
__HIP_REMOTE_VFN char1& operator&=(char1& a, const char1& b) { a.x &= b.x; return a; }
__HIP_REMOTE_VFN char1& operator&=(char1& a, char b) { a.x &= b; return a; }
__HIP_REMOTE_VFN char1 operator&(char1 a, const char1& b) { return a &= b; }
__HIP_REMOTE_VFN char1 operator&(char1 a, char b) { return a &= b; }
__HIP_REMOTE_VFN char1 operator&(char a, const char1& b) { char1 r; r.x = (char)(a & b.x); return r; }
__HIP_REMOTE_VFN char1& operator|=(char1& a, const char1& b) { a.x |= b.x; return a; }
__HIP_REMOTE_VFN char1& operator|=(char1& a, char b) { a.x |= b; return a; }
__HIP_REMOTE_VFN char1 operator|(char1 a, const char1& b) { return a |= b; }
__HIP_REMOTE_VFN char1 operator|(char1 a, char b) { return a |= b; }
__HIP_REMOTE_VFN char1 operator|(char a, const char1& b) { char1 r; r.x = (char)(a | b.x); return r; }
__HIP_REMOTE_VFN char1& operator^=(char1& a, const char1& b) { a.x ^= b.x; return a; }
__HIP_REMOTE_VFN char1& operator^=(char1& a, char b) { a.x ^= b; return a; }
__HIP_REMOTE_VFN char1 operator^(char1 a, const char1& b) { return a ^= b; }
__HIP_REMOTE_VFN char1 operator^(char1 a, char b) { return a ^= b; }
__HIP_REMOTE_VFN char1 operator^(char a, const char1& b) { char1 r; r.x = (char)(a ^ b.x); return r; }
__HIP_REMOTE_VFN char1& operator<<=(char1& a, const char1& b) { a.x <<= b.x; return a; }
__HIP_REMOTE_VFN char1& operator<<=(char1& a, char b) { a.x <<= b; return a; }
__HIP_REMOTE_VFN char1 operator<<(char1 a, const char1& b) { return a <<= b; }
__HIP_REMOTE_VFN char1 operator<<(char1 a, char b) { return a <<= b; }
__HIP_REMOTE_VFN char1 operator<<(char a, const char1& b) { char1 r; r.x = (char)(a << b.x); return r; }
__HIP_REMOTE_VFN char1& operator>>=(char1& a, const char1& b) { a.x >>= b.x; return a; }
__HIP_REMOTE_VFN char1& operator>>=(char1& a, char b) { a.x >>= b; return a; }
__HIP_REMOTE_VFN char1 operator>>(char1 a, const char1& b) { return a >>= b; }
__HIP_REMOTE_VFN char1 operator>>(char1 a, char b) { return a >>= b; }
__HIP_REMOTE_VFN char1 operator>>(char a, const char1& b) { char1 r; r.x = (char)(a >> b.x); return r; }
__HIP_REMOTE_VFN char1 operator-(const char1& a) { char1 r; r.x = (char)-a.x; return r; }
__HIP_REMOTE_VFN char1 operator+(const char1& a) { return a; }
__HIP_REMOTE_VFN char1 operator~(const char1& a) { char1 r; r.x = (char)~a.x; return r; }
__HIP_REMOTE_VFN bool operator==(const char1& a, const char1& b) { return a.x == b.x; }
__HIP_REMOTE_VFN bool operator!=(const char1& a, const char1& b) { return !(a == b); }
/* char2 */
__HIP_REMOTE_VFN char2& operator+=(char2& a, const char2& b) { a.x += b.x; a.y += b.y; return a; }
__HIP_REMOTE_VFN char2& operator+=(char2& a, char b) { a.x += b; a.y += b; return a; }
__HIP_REMOTE_VFN char2 operator+(char2 a, const char2& b) { return a += b; }
__HIP_REMOTE_VFN char2 operator+(char2 a, char b) { return a += b; }
__HIP_REMOTE_VFN char2 operator+(char a, const char2& b) { char2 r; r.x = (char)(a + b.x); r.y = (char)(a + b.y); return r; }
__HIP_REMOTE_VFN char2& operator-=(char2& a, const char2& b) { a.x -= b.x; a.y -= b.y; return a; }
__HIP_REMOTE_VFN char2& operator-=(char2& a, char b) { a.x -= b; a.y -= b; return a; }
__HIP_REMOTE_VFN char2 operator-(char2 a, const char2& b) { return a -= b; }
__HIP_REMOTE_VFN char2 operator-(char2 a, char b) { return a -= b; }
__HIP_REMOTE_VFN char2 operator-(char a, const char2& b) { char2 r; r.x = (char)(a - b.x); r.y = (char)(a - b.y); return r; }
__HIP_REMOTE_VFN char2& operator*=(char2& a, const char2& b) { a.x *= b.x; a.y *= b.y; return a; }
__HIP_REMOTE_VFN char2& operator*=(char2& a, char b) { a.x *= b; a.y *= b; return a; }
__HIP_REMOTE_VFN char2 operator*(char2 a, const char2& b) { return a *= b; }
__HIP_REMOTE_VFN char2 operator*(char2 a, char b) { return a *= b; }
__HIP_REMOTE_VFN char2 operator*(char a, const char2& b) { char2 r; r.x = (char)(a * b.x); r.y = (char)(a * b.y); return r; }
__HIP_REMOTE_VFN char2& operator/=(char2& a, const char2& b) { a.x /= b.x; a.y /= b.y; return a; }
__HIP_REMOTE_VFN char2& operator/=(char2& a, char b) { a.x /= b; a.y /= b; return a; }
__HIP_REMOTE_VFN char2 operator/(char2 a, const char2& b) { return a /= b; }
__HIP_REMOTE_VFN char2 operator/(char2 a, char b) { return a /= b; }
__HIP_REMOTE_VFN char2 operator/(char a, const char2& b) { char2 r; r.x = (char)(a / b.x); r.y = (char)(a / b.y); return r; }
__HIP_REMOTE_VFN char2& operator%=(char2& a, const char2& b) { a.x %= b.x; a.y %= b.y; return a; }
__HIP_REMOTE_VFN char2& operator%=(char2& a, char b) { a.x %= b; a.y %= b; return a; }
__HIP_REMOTE_VFN char2 operator%(char2 a, const char2& b) { return a %= b; }
__HIP_REMOTE_VFN char2 operator%(char2 a, char b) { return a %= b; }
__HIP_REMOTE_VFN char2 operator%(char a, const char2& b) { char2 r; r.x = (char)(a % b.x); r.y = (char)(a % b.y); return r; }
__HIP_REMOTE_VFN char2& operator&=(char2& a, const char2& b) { a.x &= b.x; a.y &= b.y; return a; }
__HIP_REMOTE_VFN char2& operator&=(char2& a, char b) { a.x &= b; a.y &= b; return a; }
__HIP_REMOTE_VFN char2 operator&(char2 a, const char2& b) { return a &= b; }
__HIP_REMOTE_VFN char2 operator&(char2 a, char b) { return a &= b; }
__HIP_REMOTE_VFN char2 operator&(char a, const char2& b) { char2 r; r.x = (char)(a & b.x); r.y = (char)(a & b.y); return r; }
__HIP_REMOTE_VFN char2& operator|=(char2& a, const char2& b) { a.x |= b.x; a.y |= b.y; return a; }
__HIP_REMOTE_VFN char2& operator|=(char2& a, char b) { a.x |= b; a.y |= b; return a; }
__HIP_REMOTE_VFN char2 operator|(char2 a, const char2& b) { return a |= b; }
__HIP_REMOTE_VFN char2 operator|(char2 a, char b) { return a |= b; }
__HIP_REMOTE_VFN char2 operator|(char a, const char2& b) { char2 r; r.x = (char)(a | b.x); r.y = (char)(a | b.y); return r; }
__HIP_REMOTE_VFN char2& operator^=(char2& a, const char2& b) { a.x ^= b.x; a.y ^= b.y; return a; }
__HIP_REMOTE_VFN char2& operator^=(char2& a, char b) { a.x ^= b; a.y ^= b; return a; }
__HIP_REMOTE_VFN char2 operator^(char2 a, const char2& b) { return a ^= b; }
__HIP_REMOTE_VFN char2 operator^(char2 a, char b) { return a ^= b; }
__HIP_REMOTE_VFN char2 operator^(char a, const char2& b) { char2 r; r.x = (char)(a ^ b.x); r.y = (char)(a ^ b.y); return r; }
__HIP_REMOTE_VFN char2& operator<<=(char2& a, const char2& b) { a.x <<= b.x; a.y <<= b.y; return a; }
__HIP_REMOTE_VFN char2& operator<<=(char2& a, char b) { a.x <<= b; a.y <<= b; return a; }
__HIP_REMOTE_VFN char2 operator<<(char2 a, const char2& b) { return a <<= b; }
__HIP_REMOTE_VFN char2 operator<<(char2 a, char b) { return a <<= b; }
__HIP_REMOTE_VFN char2 operator<<(char a, const char2& b) { char2 r; r.x = (char)(a << b.x); r.y = (char)(a << b.y); return r; }
__HIP_REMOTE_VFN char2& operator>>=(char2& a, const char2& b) { a.x >>= b.x; a.y >>= b.y; return a; }
__HIP_REMOTE_VFN char2& operator>>=(char2& a, char b) { a.x >>= b; a.y >>= b; return a; }
__HIP_REMOTE_VFN char2 operator>>(char2 a, const char2& b) { return a >>= b; }
__HIP_REMOTE_VFN char2 operator>>(char2 a, char b) { return a >>= b; }
__HIP_REMOTE_VFN char2 operator>>(char a, const char2& b) { char2 r; r.x = (char)(a >> b.x); r.y = (char)(a >> b.y); return r; }
__HIP_REMOTE_VFN char2 operator-(const char2& a) { char2 r; r.x = (char)-a.x; r.y = (char)-a.y; return r; }
__HIP_REMOTE_VFN char2 operator+(const char2& a) { return a; }
__HIP_REMOTE_VFN char2 operator~(const char2& a) { char2 r; r.x = (char)~a.x; r.y = (char)~a.y; return r; }
__HIP_REMOTE_VFN bool operator==(const char2& a, const char2& b) { return a.x == b.x && a.y == b.y; }
__HIP_REMOTE_VFN bool operator!=(const char2& a, const char2& b) { return !(a == b); }
/* char3 */
__HIP_REMOTE_VFN char3& operator+=(char3& a, const char3& b) { a.x += b.x; a.y += b.y; a.z += b.z; return a; }
__HIP_REMOTE_VFN char3& operator+=(char3& a, char b) { a.x += b; a.y += b; a.z += b; return a; }
__HIP_REMOTE_VFN char3 operator+(char3 a, const char3& b) { return a += b; }
__HIP_REMOTE_VFN char3 operator+(char3 a, char b) { return a += b; }
__HIP_REMOTE_VFN char3 operator+(char a, const char3& b) { char3 r; r.x = (char)(a + b.x); r.y = (char)(a + b.y); r.z = (char)(a + b.z); return r; }
__HIP_REMOTE_VFN char3& operator-=(char3& a, const char3& b) { a.x -= b.x; a.y -= b.y; a.z -= b.z; return a; }
__HIP_REMOTE_VFN char3& operator-=(char3& a, char b) { a.x -= b; a.y -= b; a.z -= b; return a; }
__HIP_REMOTE_VFN char3 operator-(char3 a, const char3& b) { return a -= b; }
__HIP_REMOTE_VFN char3 operator-(char3 a, char b) { return a -= b; }
__HIP_REMOTE_VFN char3 operator-(char a, const char3& b) { char3 r; r.x = (char)(a - b.x); r.y = (char)(a - b.y); r.z = (char)(a - b.z); return r; }
__HIP_REMOTE_VFN char3& operator*=(char3& a, const char3& b) { a.x *= b.x; a.y *= b.y; a.z *= b.z; return a; }
__HIP_REMOTE_VFN char3& operator*=(char3& a, char b) { a.x *= b; a.y *= b; a.z *= b; return a; }
__HIP_REMOTE_VFN char3 operator*(char3 a, const char3& b) { return a *= b; }
__HIP_REMOTE_VFN char3 operator*(char3 a, char b) { return a *= b; }
__HIP_REMOTE_VFN char3 operator*(char a, const char3& b) { char3 r; r.x = (char)(a * b.x); r.y = (char)(a * b.y); r.z = (char)(a * b.z); return r; }
__HIP_REMOTE_VFN char3& operator/=(char3& a, const char3& b) { a.x /= b.x; a.y /= b.y; a.z /= b.z; return a; }
__HIP_REMOTE_VFN char3& operator/=(char3& a, char b) { a.x /= b; a.y /= b; a.z /= b; return a; }
__HIP_REMOTE_VFN char3 operator/(char3 a, const char3& b) { return a /= b; }
__HIP_REMOTE_VFN char3 operator/(char3 a, char b) { return a /= b; }
__HIP_REMOTE_VFN char3 operator/(char a, const char3& b) { char3 r; r.x = (char)(a / b.x); r.y = (char)(a / b.y); r.z = (char)(a / b.z); return r; }
__HIP_REMOTE_VFN char3& operator%=(char3& a, const char3& b) { a.x %= b.x; a.y %= b.y; a.z %= b.z; return a; }
__HIP_REMOTE_VFN char3& operator%=(char3& a, char b) { a.x %= b; a.y %= b; a.z %= b; return a; }
__HIP_REMOTE_VFN char3 operator%(char3 a, const char3& b) { return a %= b; }
__HIP_REMOTE_VFN char3 operator%(char3 a, char b) { return a %= b; }
__HIP_REMOTE_VFN char3 operator%(char a, const char3& b) { char3 r; r.x = (char)(a % b.x); r.y = (char)(a % b.y); r.z = (char)(a % b.z); return r; }
__HIP_REMOTE_VFN char3& operator&=(char3& a, const char3& b) { a.x &= b.x; a.y &= b.y; a.z &= b.z; return a; }
__HIP_REMOTE_VFN char3& operator&=(char3& a, char b) { a.x &= b; a.y &= b; a.z &= b; return a; }
__HIP_REMOTE_VFN char3 operator&(char3 a, const char3& b) { return a &= b; }
__HIP_REMOTE_VFN char3 operator&(char3 a, char b) { return a &= b; }
__HIP_REMOTE_VFN char3 operator&(char a, const char3& b) { char3 r; r.x = (char)(a & b.x); r.y = (char)(a & b.y); r.z = (char)(a & b.z); return r; }
__HIP_REMOTE_VFN char3& operator|=(char3& a, const char3& b) { a.x |= b.x; a.y |= b.y; a.z |= b.z; return a; }
__HIP_REMOTE_VFN char3& operator|=(char3& a, char b) { a.x |= b; a.y |= b; a.z |= b; return a; }
__HIP_REMOTE_VFN char3 operator|(char3 a, const char3& b) { return a |= b; }
__HIP_REMOTE_VFN char3 operator|(char3 a, char b) { return a |= b; }
__HIP_REMOTE_VFN char3 operator|(char a, const char3& b) { char3 r; r.x = (char)(a | b.x); r.y = (char)(a | b.y); r.z = (char)(a | b.z); return r; }
__HIP_REMOTE_VFN char3& operator^=(char3& a, const char3& b) { a.x ^= b.x; a.y ^= b.y; a.z ^= b.z; return a; }
__HIP_REMOTE_VFN char3& operator^=(char3& a, char b) { a.x ^= b; a.y ^= b; a.z ^= b; return a; }
__HIP_REMOTE_VFN char3 operator^(char3 a, const char3& b) { return a ^= b; }
__HIP_REMOTE_VFN char3 operator^(char3 a, char b) { return a ^= b; }
__HIP_REMOTE_VFN char3 operator^(char a, const char3& b) { char3 r; r.x = (char)(a ^ b.x); r.y = (char)(a ^ b.y); r.z = (char)(a ^ b.z); return r; }
__HIP_REMOTE_VFN char3& operator<<=(char3& a, const char3& b) { a.x <<= b.x; a.y <<= b.y; a.z <<= b.z; return a; }
__HIP_REMOTE_VFN char3& operator<<=(char3& a, char b) { a.x <<= b; a.y <<= b; a.z <<= b; return a; }
__HIP_REMOTE_VFN char3 operator<<(char3 a, const char3& b) { return a <<= b; }
__HIP_REMOTE_VFN char3 operator<<(char3 a, char b) { return a <<= b; }
__HIP_REMOTE_VFN char3 operator<<(char a, const char3& b) { char3 r; r.x = (char)(a << b.x); r.y = (char)(a << b.y); r.z = (char)(a << b.z); return r; }
__HIP_REMOTE_VFN char3& operator>>=(char3& a, const char3& b) { a.x >>= b.x; a.y >>= b.y; a.z >>= b.z; return a; }
__HIP_REMOTE_VFN char3& operator>>=(char3& a, char b) { a.x >>= b; a.y >>= b; a.z >>= b; return a; }
__HIP_REMOTE_VFN char3 operator>>(char3 a, const char3& b) { return a >>= b; }
__HIP_REMOTE_VFN char3 operator>>(char3 a, char b) { return a >>= b; }
__HIP_REMOTE_VFN char3 operator>>(char a, const char3& b) { char3 r; r.x = (char)(a >> b.x); r.y = (char)(a >> b.y); r.z = (char)(a >> b.z); return r; }
__HIP_REMOTE_VFN char3 operator-(const char3& a) { char3 r; r.x = (char)-a.x; r.y = (char)-a.y; r.z = (char)-a.z; return r; }
__HIP_REMOTE_VFN char3 operator+(const char3& a) { return a; }
__HIP_REMOTE_VFN char3 operator~(const char3& a) { char3 r; r.x = (char)~a.x; r.y = (char)~a.y; r.z = (char)~a.z; return r; }
__HIP_REMOTE_VFN bool operator==(const char3& a, const char3& b) { return a.x == b.x && a.y == b.y && a.z == b.z; }
__HIP_REMOTE_VFN bool operator!=(const char3& a, const char3& b) { return !(a == b); }
/* char4 */
__HIP_REMOTE_VFN char4& operator+=(char4& a, const char4& b) { a.x += b.x; a.y += b.y; a.z += b.z; a.w += b.w; return a; }
__HIP_REMOTE_VFN char4& operator+=(char4& a, char b) { a.x += b; a.y += b; a.z += b; a.w += b; return a; }
__HIP_REMOTE_VFN char4 operator+(char4 a, const char4& b) { return a += b; }
__HIP_REMOTE_VFN char4 operator+(char4 a, char b) { return a += b; }
__HIP_REMOTE_VFN char4 operator+(char a, const char4& b) { char4 r; r.x = (char)(a + b.x); r.y = (char)(a + b.y); r.z = (char)(a + b.z); r.w = (char)(a + b.w); return r; }
__HIP_REMOTE_VFN char4& operator-=(char4& a, const char4& b) { a.x -= b.x; a.y -= b.y; a.z -= b.z; a.w -= b.w; return a; }
__HIP_REMOTE_VFN char4& operator-=(char4& a, char b) { a.x -= b; a.y -= b; a.z -= b; a.w -= b; return a; }
__HIP_REMOTE_VFN char4 operator-(char4 a, const char4& b) { return a -= b; }
__HIP_REMOTE_VFN char4 operator-(char4 a, char b) { return a -= b; }
__HIP_REMOTE_VFN char4 operator-(char a, const char4& b) { char4 r; r.x = (char)(a - b.x); r.y = (char)(a - b.y); r.z = (char)(a - b.z); r.w = (char)(a - b.w); return r; }
__HIP_REMOTE_VFN char4& operator*=(char4& a, const char4& b) { a.x *= b.x; a.y *= b.y; a.z *= b.z; a.w *= b.w; return a; }
__HIP_REMOTE_VFN char4& operator*=(char4& a, char b) { a.x *= b; a.y *= b; a.z *= b; a.w *= b; return a; }
__HIP_REMOTE_VFN char4 operator*(char4 a, const char4& b) { return a *= b; }
__HIP_REMOTE_VFN char4 operator*(char4 a, char b) { return a *= b; }
__HIP_REMOTE_VFN char4 operator*(char a, const char4& b) { char4 r; r.x = (char)(a * b.x); r.y = (char)(a * b.y); r.z = (char)(a * b.z); r.w = (char)(a * b.w); return r; }
__HIP_REMOTE_VFN char4& operator/=(char4& a, const char4& b) { a.x /= b.x; a.y /= b.y; a.z /= b.z; a.w /= b.w; return a; }
__HIP_REMOTE_VFN char4& operator/=(char4& a, char b) { a.x /= b; a.y /= b; a.z /= b; a.w /= b; return a; }
__HIP_REMOTE_VFN char4 operator/(char4 a, const char4& b) { return a /= b; }
__HIP_REMOTE_VFN char4 operator/(char4 a, char b) { return a /= b; }
__HIP_REMOTE_VFN char4 operator/(char a, const char4& b) { char4 r; r.x = (char)(a / b.x); r.y = (char)(a / b.y); r.z = (char)(a / b.z); r.w = (char)(a / b.w); return r; }
__HIP_REMOTE_VFN char4& operator%=(char4& a, const char4& b) { a.x %= b.x; a.y %= b.y; a.z %= b.z; a.w %= b.w; return a; }
__HIP_REMOTE_VFN char4& operator%=(char4& a, char b) { a.x %= b; a.y %= b; a.z %= b; a.w %= b; return a; }
__HIP_REMOTE_VFN char4 operator%(char4 a, const char4& b) { return a %= b; }
__HIP_REMOTE_VFN char4 operator%(char4 a, char b) { return a %= b; }
__HIP_REMOTE_VFN char4 operator%(char a, const char4& b) { char4 r; r.x = (char)(a % b.x); r.y = (char)(a % b.y); r.z = (char)(a % b.z); r.w = (char)(a % b.w); return r; }
__HIP_REMOTE_VFN char4& operator&=(char4& a, const char4& b) { a.x &= b.x; a.y &= b.y; a.z &= b.z; a.w &= b.w; return a; }
__HIP_REMOTE_VFN char4& operator&=(char4& a, char b) { a.x &= b; a.y &= b; a.z &= b; a.w &= b; return a; }
__HIP_REMOTE_VFN char4 operator&(char4 a, const char4& b) { return a &= b; }
__HIP_REMOTE_VFN char4 operator&(char4 a, char b) { return a &= b; }
__HIP_REMOTE_VFN char4 operator&(char a, const char4& b) { char4 r; r.x = (char)(a & b.x); r.y = (char)(a & b.y); r.z = (char)(a & b.z); r.w = (char)(a & b.w); return r; }
__HIP_REMOTE_VFN char4& operator|=(char4& a, const char4& b) { a.x |= b.x; a.y |= b.y; a.z |= b.z; a.w |= b.w; return a; }
__HIP_REMOTE_VFN char4& operator|=(char4& a, char b) { a.x |= b; a.y |= b; a.z |= b; a.w |= b; return a; }
__HIP_REMOTE_VFN char4 operator|(char4 a, const char4& b) { return a |= b; }
__HIP_REMOTE_VFN char4 operator|(char4 a, char b) { return a |= b; }
__HIP_REMOTE_VFN char4 operator|(char a, const char4& b) { char4 r; r.x = (char)(a | b.x); r.y = (char)(a | b.y); r.z = (char)(a | b.z); r.w = (char)(a | b.w); return r; }
__HIP_REMOTE_VFN char4& operator^=(char4& a, const char4& b) { a.x ^= b.x; a.y ^= b.y; a.z ^= b.z; a.w ^= b.w; return a; }
__HIP_REMOTE_VFN char4& operator^=(char4& a, char b) { a.x ^= b; a.y ^= b; a.z ^= b; a.w ^= b; return a; }
__HIP_REMOTE_VFN char4 operator^(char4 a, const char4& b) { return a ^= b; }
__HIP_REMOTE_VFN char4 operator^(char4 a, char b) { return a ^= b; }
__HIP_REMOTE_VFN char4 operator^(char a, const char4& b) { char4 r; r.x = (char)(a ^ b.x); r.y = (char)(a ^ b.y); r.z = (char)(a ^ b.z); r.w = (char)(a ^ b.w); return r; }
__HIP_REMOTE_VFN char4& operator<<=(char4& a, const char4& b) { a.x <<= b.x; a.y <<= b.y; a.z <<= b.z; a.w <<= b.w; return a; }
__HIP_REMOTE_VFN char4& operator<<=(char4& a, char b) { a.x <<= b; a.y <<= b; a.z <<= b; a.w <<= b; return a; }
__HIP_REMOTE_VFN char4 operator<<(char4 a, const char4& b) { return a <<= b; }
__HIP_REMOTE_VFN char4 operator<<(char4 a, char b) { return a <<= b; }
__HIP_REMOTE_VFN char4 operator<<(char a, const char4& b) { char4 r; r.x = (char)(a << b.x); r.y = (char)(a << b.y); r.z = (char)(a << b.z); r.w = (char)(a << b.w); return r; }
__HIP_REMOTE_VFN char4& operator>>=(char4& a, const char4& b) { a.x >>= b.x; a.y >>= b.y; a.z >>= b.z; a.w >>= b.w; return a; }
__HIP_REMOTE_VFN char4& operator>>=(char4& a, char b) { a.x >>= b; a.y >>= b; a.z >>= b; a.w >>= b; return a; }
__HIP_REMOTE_VFN char4 operator>>(char4 a, const char4& b) { return a >>= b; }
__HIP_REMOTE_VFN char4 operator>>(char4 a, char b) { return a >>= b; }
__HIP_REMOTE_VFN char4 operator>>(char a, const char4& b) { char4 r; r.x = (char)(a >> b.x); r.y = (char)(a >> b.y); r.z = (char)(a >> b.z); r.w = (char)(a >> b.w); return r; }
__HIP_REMOTE_VFN char4 operator-(const char4& a) { char4 r; r.x = (char)-a.x; r.y = (char)-a.y; r.z = (char)-a.z; r.w = (char)-a.w; return r; }
__HIP_REMOTE_VFN char4 operator+(const char4& a) { return a; }
__HIP_REMOTE_VFN char4 operator~(const char4& a) { char4 r; r.x = (char)~a.x; r.y = (char)~a.y; r.z = (char)~a.z; r.w = (char)~a.w; return r; }
__HIP_REMOTE_VFN bool operator==(const char4& a, const char4& b) { return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w; }
__HIP_REMOTE_VFN bool operator!=(const char4& a, const char4& b) { return !(a == b); }
/* uchar1 */
__HIP_REMOTE_VFN uchar1& operator+=(uchar1& a, const uchar1& b) { a.x += b.x; return a; }
__HIP_REMOTE_VFN uchar1& operator+=(uchar1& a, unsigned char b) { a.x += b; return a; }
__HIP_REMOTE_VFN uchar1 operator+(uchar1 a, const uchar1& b) { return a += b; }
__HIP_REMOTE_VFN uchar1 operator+(uchar1 a, unsigned char b) { return a += b; }
__HIP_REMOTE_VFN uchar1 operator+(unsigned char a, const uchar1& b) { uchar1 r; r.x = (unsigned char)(a + b.x); return r; }
__HIP_REMOTE_VFN uchar1& operator-=(uchar1& a, const uchar1& b) { a.x -= b.x; return a; }
__HIP_REMOTE_VFN uchar1& operator-=(uchar1& a, unsigned char b) { a.x -= b; return a; }
__HIP_REMOTE_VFN uchar1 operator-(uchar1 a, const uchar1& b) { return a -= b; }
__HIP_REMOTE_VFN uchar1 operator-(uchar1 a, unsigned char b) { return a -= b; }
__HIP_REMOTE_VFN uchar1 operator-(unsigned char a, const uchar1& b) { uchar1 r; r.x = (unsigned char)(a - b.x); return r; }
__HIP_REMOTE_VFN uchar1& operator*=(uchar1& a, const uchar1& b) { a.x *= b.x; return a; }
__HIP_REMOTE_VFN uchar1& operator*=(uchar1& a, unsigned char b) { a.x *= b; return a; }
__HIP_REMOTE_VFN uchar1 operator*(uchar1 a, const uchar1& b) { return a *= b; }
__HIP_REMOTE_VFN uchar1 operator*(uchar1 a, unsigned char b) { return a *= b; }
__HIP_REMOTE_VFN uchar1 operator*(unsigned char a, const uchar1& b) { uchar1 r; r.x = (unsigned char)(a * b.x); return r; }
__HIP_REMOTE_VFN uchar1& operator/=(uchar1& a, const uchar1& b) { a.x /= b.x; return a; }
__HIP_REMOTE_VFN uchar1& operator/=(uchar1& a, unsigned char b) { a.x /= b; return a; }
__HIP_REMOTE_VFN uchar1 operator/(uchar1 a, const uchar1& b) { return a /= b; }
__HIP_REMOTE_VFN uchar1 operator/(uchar1 a, unsigned char b) { return a /= b; }
__HIP_REMOTE_VFN uchar1 operator/(unsigned char a, const uchar1& b) { uchar1 r; r.x = (unsigned char)(a / b.x); return r; }
__HIP_REMOTE_VFN uchar1& operator%=(uchar1& a, const uchar1& b) { a.x %= b.x; return a; }
__HIP_REMOTE_VFN uchar1& operator%=(uchar1& a, unsigned char b) { a.x %= b; return a; }
__HIP_REMOTE_VFN uchar1 operator%(uchar1 a, const uchar1& b) { return a %= b; }
__HIP_REMOTE_VFN uchar1 operator%(uchar1 a, unsigned char b) { return a %= b; }
__HIP_REMOTE_VFN uchar1 operator%(unsigned char a, const uchar1& b) { uchar1 r; r.x = (unsigned char)(a % b.x); return r; }
__HIP_REMOTE_VFN uchar1& operator&=(uchar1& a, const uchar1& b) { a.x &= b.x; return a; }
__HIP_REMOTE_VFN uchar1& operator&=(uchar1& a, unsigned char b) { a.x &= b; return a; }
__HIP_REMOTE_VFN uchar1 operator&(uchar1 a, const uchar1& b) { return a &= b; }
__HIP_REMOTE_VFN uchar1 operator&(uchar1 a, unsigned char b) { return a &= b; }
__HIP_REMOTE_VFN uchar1 operator&(unsigned char a, const uchar1& b) { uchar1 r; r.x = (unsigned char)(a & b.x); return r; }
__HIP_REMOTE_VFN uchar1& operator|=(uchar1& a, const uchar1& b) { a.x |= b.x; return a; }
__HIP_REMOTE_VFN uchar1& operator|=(uchar1& a, unsigned char b) { a.x |= b; return a; }
__HIP_REMOTE_VFN uchar1 operator|(uchar1 a, const uchar1& b) { return a |= b; }
__HIP_REMOTE_VFN uchar1 operator|(uchar1 a, unsigned char b) { return a |= b; }
__HIP_REMOTE_VFN uchar1 operator|(unsigned char a, const uchar1& b) { uchar1 r; r.x = (unsigned char)(a | b.x); return r; }
__HIP_REMOTE_VFN uchar1& operator^=(uchar1& a, const uchar1& b) { a.x ^= b.x; return a; }
__HIP_REMOTE_VFN uchar1& operator^=(uchar1& a, unsigned char b) { a.x ^= b; return a; }
__HIP_REMOTE_VFN uchar1 operator^(uchar1 a, const uchar1& b) { return a ^= b; }
__HIP_REMOTE_VFN uchar1 operator^(uchar1 a, unsigned char b) { return a ^= b; }
__HIP_REMOTE_VFN uchar1 operator^(unsigned char a, const uchar1& b) { uchar1 r; r.x = (unsigned char)(a ^ b.x); return r; }
__HIP_REMOTE_VFN uchar1& operator<<=(uchar1& a, const uchar1& b) { a.x <<= b.x; return a; }
__HIP_REMOTE_VFN uchar1& operator<<=(uchar1& a, unsigned char b) { a.x <<= b; return a; }
__HIP_REMOTE_VFN uchar1 operator<<(uchar1 a, const uchar1& b) { return a <<= b; }
__HIP_REMOTE_VFN uchar1 operator<<(uchar1 a, unsigned char b) { return a <<= b; }
__HIP_REMOTE_VFN uchar1 operator<<(unsigned char a, const uchar1& b) { uchar1 r; r.x = (unsigned char)(a << b.x); return r; }
__HIP_REMOTE_VFN uchar1& operator>>=(uchar1& a, const uchar1& b) { a.x >>= b.x; return a; }
__HIP_REMOTE_VFN uchar1& operator>>=(uchar1& a, unsigned char b) { a.x >>= b; return a; }
__HIP_REMOTE_VFN uchar1 operator>>(uchar1 a, const uchar1& b) { return a >>= b; }
__HIP_REMOTE_VFN uchar1 operator>>(uchar1 a, unsigned char b) { return a >>= b; }
__HIP_REMOTE_VFN uchar1 operator>>(unsigned char a, const uchar1& b) { uchar1 r; r.x = (unsigned char)(a >> b.x); return r; }
__HIP_REMOTE_VFN uchar1 operator-(const uchar1& a) { uchar1 r; r.x = (unsigned char)-a.x; return r; }
__HIP_REMOTE_VFN uchar1 operator+(const uchar1& a) { return a; }
__HIP_REMOTE_VFN uchar1 operator~(const uchar1& a) { uchar1 r; r.x = (unsigned char)~a.x; return r; }
__HIP_REMOTE_VFN bool operator==(const uchar1& a, const uchar1& b) { return a.x == b.x; }
__HIP_REMOTE_VFN bool operator!=(const uchar1& a, const uchar1& b) { return !(a == b); }
/* uchar2 */
__HIP_REMOTE_VFN uchar2& operator+=(uchar2& a, const uchar2& b) { a.x += b.x; a.y += b.y; return a; }
__HIP_REMOTE_VFN uchar2& operator+=(uchar2& a, unsigned char b) { a.x += b; a.y += b; return a; }
__HIP_REMOTE_VFN uchar2 operator+(uchar2 a, const uchar2& b) { return a += b; }
__HIP_REMOTE_VFN uchar2 operator+(uchar2 a, unsigned char b) { return a += b; }
__HIP_REMOTE_VFN uchar2 operator+(unsigned char a, const uchar2& b) { uchar2 r; r.x = (unsigned char)(a + b.x); r.y = (unsigned char)(a + b.y); return r; }
__HIP_REMOTE_VFN uchar2& operator-=(uchar2& a, const uchar2& b) { a.x -= b.x; a.y -= b.y; return a; }
__HIP_REMOTE_VFN uchar2& operator-=(uchar2& a, unsigned char b) { a.x -= b; a.y -= b; return a; }
__HIP_REMOTE_VFN uchar2 operator-(uchar2 a, const uchar2& b) { return a -= b; }
__HIP_REMOTE_VFN uchar2 operator-(uchar2 a, unsigned char b) { return a -= b; }
__HIP_REMOTE_VFN uchar2 operator-(unsigned char a, const uchar2& b) { uchar2 r; r.x = (unsigned char)(a - b.x); r.y = (unsigned char)(a - b.y); return r; }
__HIP_REMOTE_VFN uchar2& operator*=(uchar2& a, const uchar2& b) { a.x *= b.x; a.y *= b.y; return a; }
__HIP_REMOTE_VFN uchar2& operator*=(uchar2& a, unsigned char b) { a.x *= b; a.y *= b; return a; }
__HIP_REMOTE_VFN uchar2 operator*(uchar2 a, const uchar2& b) { return a *= b; }
__HIP_REMOTE_VFN uchar2 operator*(uchar2 a, unsigned char b) { return a *= b; }
__HIP_REMOTE_VFN uchar2 operator*(unsigned char a, const uchar2& b) { uchar2 r; r.x = (unsigned char)(a * b.x); r.y = (unsigned char)(a * b.y); return r; }
__HIP_REMOTE_VFN uchar2& operator/=(uchar2& a, const uchar2& b) { a.x /= b.x; a.y /= b.y; return a; }
__HIP_REMOTE_VFN uchar2& operator/=(uchar2& a, unsigned char b) { a.x /= b; a.y /= b; return a; }
__HIP_REMOTE_VFN uchar2 operator/(uchar2 a, const uchar2& b) { return a /= b; }
__HIP_REMOTE_VFN uchar2 operator/(uchar2 a, unsigned char b) { return a /= b; }
__HIP_REMOTE_VFN uchar2 operator/(unsigned char a, const uchar2& b) { uchar2 r; r.x = (unsigned char)(a / b.x); r.y = (unsigned char)(a / b.y); return r; }
__HIP_REMOTE_VFN uchar2& operator%=(uchar2& a, const uchar2& b) { a.x %= b.x; a.y %= b.y; return a; }
__HIP_REMOTE_VFN uchar2& operator%=(uchar2& a, unsigned char b) { a.x %= b; a.y %= b; return a; }
__HIP_REMOTE_VFN uchar2 operator%(uchar2 a, const uchar2& b) { return a %= b; }
__HIP_REMOTE_VFN uchar2 operator%(uchar2 a, unsigned char b) { return a %= b; }
__HIP_REMOTE_VFN uchar2 operator%(unsigned char a, const uchar2& b) { uchar2 r; r.x = (unsigned char)(a % b.x); r.y = (unsigned char)(a % b.y); return r; }
__HIP_REMOTE_VFN uchar2& operator&=(uchar2& a, const uchar2& b) { a.x &= b.x; a.y &= b.y; return a; }
__HIP_REMOTE_VFN uchar2& operator&=(uchar2& a, unsigned char b) { a.x &= b; a.y &= b; return a; }
__HIP_REMOTE_VFN uchar2 operator&(uchar2 a, const uchar2& b) { return a &= b; }
__HIP_REMOTE_VFN uchar2 operator&(uchar2 a, unsigned char b) { return a &= b; }
__HIP_REMOTE_VFN uchar2 operator&(unsigned char a, const uchar2& b) { uchar2 r; r.x = (unsigned char)(a & b.x); r.y = (unsigned char)(a & b.y); return r; }
__HIP_REMOTE_VFN uchar2& operator|=(uchar2& a, const uchar2& b) { a.x |= b.x; a.y |= b.y; return a; }
__HIP_REMOTE_VFN uchar2& operator|=(uchar2& a, unsigned char b) { a.x |= b; a.y |= b; return a; }
__HIP_REMOTE_VFN uchar2 operator|(uchar2 a, const uchar2& b) { return a |= b; }
__HIP_REMOTE_VFN uchar2 operator|(uchar2 a, unsigned char b) { return a |= b; }
__HIP_REMOTE_VFN uchar2 operator|(unsigned char a, const uchar2& b) { uchar2 r; r.x = (unsigned char)(a | b.x); r.y = (unsigned char)(a | b.y); return r; }
__HIP_REMOTE_VFN uchar2& operator^=(uchar2& a, const uchar2& b) { a.x ^= b.x; a.y ^= b.y; return a; }
__HIP_REMOTE_VFN uchar2& operator^=(uchar2& a, unsigned char b) { a.x ^= b; a.y ^= b; return a; }
__HIP_REMOTE_VFN uchar2 operator^(uchar2 a, const uchar2& b) { return a ^= b; }
__HIP_REMOTE_VFN uchar2 operator^(uchar2 a, unsigned char b) { return a ^= b; }
__HIP_REMOTE_VFN uchar2 operator^(unsigned char a, const uchar2& b) { uchar2 r; r.x = (unsigned char)(a ^ b.x); r.y = (unsigned char)(a ^ b.y); return r; }
__HIP_REMOTE_VFN uchar2& operator<<=(uchar2& a, const uchar2& b) { a.x <<= b.x; a.y <<= b.y; return a; }
__HIP_REMOTE_VFN uchar2& operator<<=(uchar2& a, unsigned char b) { a.x <<= b; a.y <<= b; return a; }
__HIP_REMOTE_VFN uchar2 operator<<(uchar2 a, const uchar2& b) { return a <<= b; }
__HIP_REMOTE_VFN uchar2 operator<<(uchar2 a, unsigned char b) { return a <<= b; }
__HIP_REMOTE_VFN uchar2 operator<<(unsigned char a, const uchar2& b) { uchar2 r; r.x = (unsigned char)(a << b.x); r.y = (unsigned char)(a << b.y); return r; }
__HIP_REMOTE_VFN uchar2& operator>>=(uchar2& a, const uchar2& b) { a.x >>= b.x; a.y >>= b.y; return a; }
__HIP_REMOTE_VFN uchar2& operator>>=(uchar2& a, unsigned char b) { a.x >>= b; a.y >>= b; return a; }
__HIP_REMOTE_VFN uchar2 operator>>(uchar2 a, const uchar2& b) { return a >>= b; }
__HIP_REMOTE_VFN uchar2 operator>>(uchar2 a, unsigned char b) { return a >>= b; }
__HIP_REMOTE_VFN uchar2 operator>>(unsigned char a, const uchar2& b) { uchar2 r; r.x = (unsigned char)(a >> b.x); r.y = (unsigned char)(a >> b.y); return r; }
__HIP_REMOTE_VFN uchar2 operator-(const uchar2& a) { uchar2 r; r.x = (unsigned char)-a.x; r.y = (unsigned char)-a.y; return r; }
__HIP_REMOTE_VFN uchar2 operator+(const uchar2& a) { return a; }
__HIP_REMOTE_VFN uchar2 operator~(const uchar2& a) { uchar2 r; r.x = (unsigned char)~a.x; r.y = (unsigned char)~a.y; return r; }
__HIP_REMOTE_VFN bool operator==(const uchar2& a, const uchar2& b) { return a.x == b.x && a.y == b.y; }
__HIP_REMOTE_VFN bool operator!=(const uchar2& a, const uchar2& b) { return !(a == b); }
/* uchar3 */
__HIP_REMOTE_VFN uchar3& operator+=(uchar3& a, const uchar3& b) { a.x += b.x; a.y += b.y; a.z += b.z; return a; }
__HIP_REMOTE_VFN uchar3& operator+=(uchar3& a, unsigned char b) { a.x += b; a.y += b; a.z += b; return a; }
__HIP_REMOTE_VFN uchar3 operator+(uchar3 a, const uchar3& b) { return a += b; }
__HIP_REMOTE_VFN uchar3 operator+(uchar3 a, unsigned char b) { return a += b; }
__HIP_REMOTE_VFN uchar3 operator+(unsigned char a, const uchar3& b) { uchar3 r; r.x = (unsigned char)(a + b.x); r.y = (unsigned char)(a + b.y); r.z = (unsigned char)(a + b.z); return r; }
__HIP_REMOTE_VFN uchar3& operator-=(uchar3& a, const uchar3& b) { a.x -= b.x; a.y -= b.y; a.z -= b.z; return a; }
__HIP_REMOTE_VFN uchar3& operator-=(uchar3& a, unsigned char b) { a.x -= b; a.y -= b; a.z -= b; return a; }
__HIP_REMOTE_VFN uchar3 operator-(uchar3 a, const uchar3& b) { return a -= b; }
__HIP_REMOTE_VFN uchar3 operator-(uchar3 a, unsigned char b) { return a -= b; }
__HIP_REMOTE_VFN uchar3 operator-(unsigned char a, const uchar3& b) { uchar3 r; r.x = (unsigned char)(a - b.x); r.y = (unsigned char)(a - b.y); r.z = (unsigned char)(a - b.z); return r; }
__HIP_REMOTE_VFN uchar3& operator*=(uchar3& a, const uchar3& b) { a.x *= b.x; a.y *= b.y; a.z *= b.z; return a; }
__HIP_REMOTE_VFN uchar3& operator*=(uchar3& a, unsigned char b) { a.x *= b; a.y *= b; a.z *= b; return a; }
__HIP_REMOTE_VFN uchar3 operator*(uchar3 a, const uchar3& b) { return a *= b; }
__HIP_REMOTE_VFN uchar3 operator*(uchar3 a, unsigned char b) { return a *= b; }
__HIP_REMOTE_VFN uchar3 operator*(unsigned char a, const uchar3& b) { uchar3 r; r.x = (unsigned char)(a * b.x); r.y = (unsigned char)(a * b.y); r.z = (unsigned char)(a * b.z); return r; }
__HIP_REMOTE_VFN uchar3& operator/=(uchar3& a, const uchar3& b) { a.x /= b.x; a.y /= b.y; a.z /= b.z; return a; }
__HIP_REMOTE_VFN uchar3& operator/=(uchar3& a, unsigned char b) { a.x /= b; a.y /= b; a.z /= b; return a; }
__HIP_REMOTE_VFN uchar3 operator/(uchar3 a, const uchar3& b) { return a /= b; }
__HIP_REMOTE_VFN uchar3 operator/(uchar3 a, unsigned char b) { return a /= b; }
__HIP_REMOTE_VFN uchar3 operator/(unsigned char a, const uchar3& b) { uchar3 r; r.x = (unsigned char)(a / b.x); r.y = (unsigned char)(a / b.y); r.z = (unsigned char)(a / b.z); return r; }
__HIP_REMOTE_VFN uchar3& operator%=(uchar3& a, const uchar3& b) { a.x %= b.x; a.y %= b.y; a.z %= b.z; return a; }
__HIP_REMOTE_VFN uchar3& operator%=(uchar3& a, unsigned char b) { a.x %= b; a.y %= b; a.z %= b; return a; }
__HIP_REMOTE_VFN uchar3 operator%(uchar3 a, const uchar3& b) { return a %= b; }
__HIP_REMOTE_VFN uchar3 operator%(uchar3 a, unsigned char b) { return a %= b; }
__HIP_REMOTE_VFN uchar3 operator%(unsigned char a, const uchar3& b) { uchar3 r; r.x = (unsigned char)(a % b.x); r.y = (unsigned char)(a % b.y); r.z = (unsigned char)(a % b.z); return r; }
__HIP_REMOTE_VFN uchar3& operator&=(uchar3& a, const uchar3& b) { a.x &= b.x; a.y &= b.y; a.z &= b.z; return a; }
__HIP_REMOTE_VFN uchar3& operator&=(uchar3& a, unsigned char b) { a.x &= b; a.y &= b; a.z &= b; return a; }
__HIP_REMOTE_VFN uchar3 operator&(uchar3 a, const uchar3& b) { return a &= b; }
__HIP_REMOTE_VFN uchar3 operator&(uchar3 a, unsigned char b) { return a &= b; }
__HIP_REMOTE_VFN uchar3 operator&(unsigned char a, const uchar3& b) { uchar3 r; r.x = (unsigned char)(a & b.x); r.y = (unsigned char)(a & b.y); r.z = (unsigned char)(a & b.z); return r; }
__HIP_REMOTE_VFN uchar3& operator|=(uchar3& a, const uchar3& b) { a.x |= b.x; a.y |= b.y; a.z |= b.z; return a; }
__HIP_REMOTE_VFN uchar3& operator|=(uchar3& a, unsigned char b) { a.x |= b; a.y |= b; a.z |= b; return a; }
__HIP_REMOTE_VFN uchar3 operator|(uchar3 a, const uchar3& b) { return a |= b; }
__HIP_REMOTE_VFN uchar3 operator|(uchar3 a, unsigned char b) { return a |= b; }
__HIP_REMOTE_VFN uchar3 operator|(unsigned char a, const uchar3& b) { uchar3 r; r.x = (unsigned char)(a | b.x); r.y = (unsigned char)(a | b.y); r.z = (unsigned char)(a | b.z); return r; }
__HIP_REMOTE_VFN uchar3& operator^=(uchar3& a, const uchar3& b) { a.x ^= b.x; a.y ^= b.y; a.z ^= b.z; return a; }
__HIP_REMOTE_VFN uchar3& operator^=(uchar3& a, unsigned char b) { a.x ^= b; a.y ^= b; a.z ^= b; return a; }
__HIP_REMOTE_VFN uchar3 operator^(uchar3 a, const uchar3& b) { return a ^= b; }
__HIP_REMOTE_VFN uchar3 operator^(uchar3 a, unsigned char b) { return a ^= b; }
__HIP_REMOTE_VFN uchar3 operator^(unsigned char a, const uchar3& b) { uchar3 r; r.x = (unsigned char)(a ^ b.x); r.y = (unsigned char)(a ^ b.y); r.z = (unsigned char)(a ^ b.z); return r; }
__HIP_REMOTE_VFN uchar3& operator<<=(uchar3& a, const uchar3& b) { a.x <<= b.x; a.y <<= b.y; a.z <<= b.z; return a; }
__HIP_REMOTE_VFN uchar3& operator<<=(uchar3& a, unsigned char b) { a.x <<= b; a.y <<= b; a.z <<= b; return a; }
__HIP_REMOTE_VFN uchar3 operator<<(uchar3 a, const uchar3& b) { return a <<= b; }
__HIP_REMOTE_VFN uchar3 operator<<(uchar3 a, unsigned char b) { return a <<= b; }
__HIP_REMOTE_VFN uchar3 operator<<(unsigned char a, const uchar3& b) { uchar3 r; r.x = (unsigned char)(a << b.x); r.y = (unsigned char)(a << b.y); r.z = (unsigned char)(a << b.z); return r; }
__HIP_REMOTE_VFN uchar3& operator>>=(uchar3& a, const uchar3& b) { a.x >>= b.x; a.y >>= b.y; a.z >>= b.z; return a; }
__HIP_REMOTE_VFN uchar3& operator>>=(uchar3& a, unsigned char b) { a.x >>= b; a.y >>= b; a.z >>= b; return a; }
__HIP_REMOTE_VFN uchar3 operator>>(uchar3 a, const uchar3& b) { return a >>= b; }
__HIP_REMOTE_VFN uchar3 operator>>(uchar3 a, unsigned char b) { return a >>= b; }
__HIP_REMOTE_VFN uchar3 operator>>(unsigned char a, const uchar3& b) { uchar3 r; r.x = (unsigned char)(a >> b.x); r.y = (unsigned char)(a >> b.y); r.z = (unsigned char)(a >> b.z); return r; }
__HIP_REMOTE_VFN uchar3 operator-(const uchar3& a) { uchar3 r; r.x = (unsigned char)-a.x; r.y = (unsigned char)-a.y; r.z = (unsigned char)-a.z; return r; }
__HIP_REMOTE_VFN uchar3 operator+(const uchar3& a) { return a; }
__HIP_REMOTE_VFN uchar3 operator~(const uchar3& a) { uchar3 r; r.x = (unsigned char)~a.x; r.y = (unsigned char)~a.y; r.z = (unsigned char)~a.z; return r; }
__HIP_REMOTE_VFN bool operator==(const uchar3& a, const uchar3& b) { return a.x == b.x && a.y == b.y && a.z == b.z; }
__HIP_REMOTE_VFN bool operator!=(const uchar3& a, const uchar3& b) { return !(a == b); }
/* uchar4 */
__HIP_REMOTE_VFN uchar4& operator+=(uchar4& a, const uchar4& b) { a.x += b.x; a.y += b.y; a.z += b.z; a.w += b.w; return a; }
__HIP_REMOTE_VFN uchar4& operator+=(uchar4& a, unsigned char b) { a.x += b; a.y += b; a.z += b; a.w += b; return a; }
__HIP_REMOTE_VFN uchar4 operator+(uchar4 a, const uchar4& b) { return a += b; }
__HIP_REMOTE_VFN uchar4 operator+(uchar4 a, unsigned char b) { return a += b; }
__HIP_REMOTE_VFN uchar4 operator+(unsigned char a, const uchar4& b) { uchar4 r; r.x = (unsigned char)(a + b.x); r.y = (unsigned char)(a + b.y); r.z = (unsigned char)(a + b.z); r.w = (unsigned char)(a + b.w); return r; }
__HIP_REMOTE_VFN uchar4& operator-=(uchar4& a, const uchar4& b) { a.x -= b.x; a.y -= b.y; a.z -= b.z; a.w -= b.w; return a; }
__HIP_REMOTE_VFN uchar4& operator-=(uchar4& a, unsigned char b) { a.x -= b; a.y -= b; a.z -= b; a.w -= b; return a; }
__HIP_REMOTE_VFN uchar4 operator-(uchar4 a, const uchar4& b) { return a -= b; }
__HIP_REMOTE_VFN uchar4 operator-(uchar4 a, unsigned char b) { return a -= b; }
__HIP_REMOTE_VFN uchar4 operator-(unsigned char a, const uchar4& b) { uchar4 r; r.x = (unsigned char)(a - b.x); r.y = (unsigned char)(a - b.y); r.z = (unsigned char)(a - b.z); r.w = (unsigned char)(a - b.w); return r; }
__HIP_REMOTE_VFN uchar4& operator*=(uchar4& a, const uchar4& b) { a.x *= b.x; a.y *= b.y; a.z *= b.z; a.w *= b.w; return a; }
__HIP_REMOTE_VFN uchar4& operator*=(uchar4& a, unsigned char b) { a.x *= b; a.y *= b; a.z *= b; a.w *= b; return a; }
__HIP_REMOTE_VFN uchar4 operator*(uchar4 a, const uchar4& b) { return a *= b; }
__HIP_REMOTE_VFN uchar4 operator*(uchar4 a, unsigned char b) { return a *= b; }
__HIP_REMOTE_VFN uchar4 operator*(unsigned char a, const uchar4& b) { uchar4 r; r.x = (unsigned char)(a * b.x); r.y = (unsigned char)(a * b.y); r.z = (unsigned char)(a * b.z); r.w = (unsigned char)(a * b.w); return r; }
__HIP_REMOTE_VFN uchar4& operator/=(uchar4& a, const uchar4& b) { a.x /= b.x; a.y /= b.y; a.z /= b.z; a.w /= b.w; return a; }
__HIP_REMOTE_VFN uchar4& operator/=(uchar4& a, unsigned char b) { a.x /= b; a.y /= b; a.z /= b; a.w /= b; return a; }
__HIP_REMOTE_VFN uchar4 operator/(uchar4 a, const uchar4& b) { return a /= b; }
__HIP_REMOTE_VFN uchar4 operator/(uchar4 a, unsigned char b) { return a /= b; }
__HIP_REMOTE_VFN uchar4 operator/(unsigned char a, const uchar4& b) { uchar4 r; r.x = (unsigned char)(a / b.x); r.y = (unsigned char)(a / b.y); r.z = (unsigned char)(a / b.z); r.w = (unsigned char)(a / b.w); return r; }
__HIP_REMOTE_VFN uchar4& operator%=(uchar4& a, const uchar4& b) { a.x %= b.x; a.y %= b.y; a.z %= b.z; a.w %= b.w; return a; }
__HIP_REMOTE_VFN uchar4& operator%=(uchar4& a, unsigned char b) { a.x %= b; a.y %= b; a.z %= b; a.w %= b; return a; }
__HIP_REMOTE_VFN uchar4 operator%(uchar4 a, const uchar4& b) { return a %= b; }
__HIP_REMOTE_VFN uchar4 operator%(uchar4 a, unsigned char b) { return a %= b; }
__HIP_REMOTE_VFN uchar4 operator%(unsigned char a, const uchar4& b) { uchar4 r; r.x = (unsigned char)(a % b.x); r.y = (unsigned char)(a % b.y); r.z = (unsigned char)(a % b.z); r.w = (unsigned char)(a % b.w); return r; }
__HIP_REMOTE_VFN uchar4& operator&=(uchar4& a, const uchar4& b) { a.x &= b.x; a.y &= b.y; a.z &= b.z; a.w &= b.w; return a; }
__HIP_REMOTE_VFN uchar4& operator&=(uchar4& a, unsigned char b) { a.x &= b; a.y &= b; a.z &= b; a.w &= b; return a; }
__HIP_REMOTE_VFN uchar4 operator&(uchar4 a, const uchar4& b) { return a &= b; }
__HIP_REMOTE_VFN uchar4 operator&(uchar4 a, unsigned char b) { return a &= b; }
__HIP_REMOTE_VFN uchar4 operator&(unsigned char a, const uchar4& b) { uchar4 r; r.x = (unsigned char)(a & b.x); r.y = (unsigned char)(a & b.y); r.z = (unsigned char)(a & b.z); r.w = (unsigned char)(a & b.w); return r; }
__HIP_REMOTE_VFN uchar4& operator|=(uchar4& a, const uchar4& b) { a.x |= b.x; a.y |= b.y; a.z |= b.z; a.w |= b.w; return a; }
__HIP_REMOTE_VFN uchar4& operator|=(uchar4& a, unsigned char b) { a.x |= b; a.y |= b; a.z |= b; a.w |= b; return a; }
__HIP_REMOTE_VFN uchar4 operator|(uchar4 a, const uchar4& b) { return a |= b; }
__HIP_REMOTE_VFN uchar4 operator|(uchar4 a, unsigned char b) { return a |= b; }
__HIP_REMOTE_VFN uchar4 operator|(unsigned char a, const uchar4& b) { uchar4 r; r.x = (unsigned char)(a | b.x); r.y = (unsigned char)(a | b.y); r.z = (unsigned char)(a | b.z); r.w = (unsigned char)(a | b.w); return r; }
__HIP_REMOTE_VFN uchar4& operator^=(uchar4& a, const uchar4& b) { a.x ^= b.x; a.y ^= b.y; a.z ^= b.z; a.w ^= b.w; return a; }
__HIP_REMOTE_VFN uchar4& operator^=(uchar4& a, unsigned char b) { a.x ^= b; a.y ^= b; a.z ^= b; a.w ^= b; return a; }
__HIP_REMOTE_VFN uchar4 operator^(uchar4 a, const uchar4& b) { return a ^= b; }
__HIP_REMOTE_VFN uchar4 operator^(uchar4 a, unsigned char b) { return a ^= b; }
__HIP_REMOTE_VFN uchar4 operator^(unsigned char a, const uchar4& b) { uchar4 r; r.x = (unsigned char)(a ^ b.x); r.y = (unsigned char)(a ^ b.y); r.z = (unsigned char)(a ^ b.z); r.w = (unsigned char)(a ^ b.w); return r; }
__HIP_REMOTE_VFN uchar4& operator<<=(uchar4& a, const uchar4& b) { a.x <<= b.x; a.y <<= b.y; a.z <<= b.z; a.w <<= b.w; return a; }
__HIP_REMOTE_VFN uchar4& operator<<=(uchar4& a, unsigned char b) { a.x <<= b; a.y <<= b; a.z <<= b; a.w <<= b; return a; }
__HIP_REMOTE_VFN uchar4 operator<<(uchar4 a, const uchar4& b) { return a <<= b; }
__HIP_REMOTE_VFN uchar4 operator<<(uchar4 a, unsigned char b) { return a <<= b; }
__HIP_REMOTE_VFN uchar4 operator<<(unsigned char a, const uchar4& b) { uchar4 r; r.x = (unsigned char)(a << b.x); r.y = (unsigned char)(a << b.y); r.z = (unsigned char)(a << b.z); r.w = (unsigned char)(a << b.w); return r; }
__HIP_REMOTE_VFN uchar4& operator>>=(uchar4& a, const uchar4& b) { a.x >>= b.x; a.y >>= b.y; a.z >>= b.z; a.w >>= b.w; return a; }
__HIP_REMOTE_VFN uchar4& operator>>=(uchar4& a, unsigned char b) { a.x >>= b; a.y >>= b; a.z >>= b; a.w >>= b; return a; }
__HIP_REMOTE_VFN uchar4 operator>>(uchar4 a, const uchar4& b) { return a >>= b; }
__HIP_REMOTE_VFN uchar4 operator>>(uchar4 a, unsigned char b) { return a >>= b; }
__HIP_REMOTE_VFN uchar4 operator>>(unsigned char a, const uchar4& b) { uchar4 r; r.x = (unsigned char)(a >> b.x); r.y = (unsigned char)(a >> b.y); r.z = (unsigned char)(a >> b.z); r.w = (unsigned char)(a >> b.w); return r; }
__HIP_REMOTE_VFN uchar4 operator-(const uchar4& a) { uchar4 r; r.x = (unsigned char)-a.x; r.y = (unsigned char)-a.y; r.z = (unsigned char)-a.z; r.w = (unsigned char)-a.w; return r; }
__HIP_REMOTE_VFN uchar4 operator+(const uchar4& a) { return a; }
__HIP_REMOTE_VFN uchar4 operator~(const uchar4& a) { uchar4 r; r.x = (unsigned char)~a.x; r.y = (unsigned char)~a.y; r.z = (unsigned char)~a.z; r.w = (unsigned char)~a.w; return r; }
__HIP_REMOTE_VFN bool operator==(const uchar4& a, const uchar4& b) { return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w; }
__HIP_REMOTE_VFN bool operator!=(const uchar4& a, const uchar4& b) { return !(a == b); }
/* short1 */
__HIP_REMOTE_VFN short1& operator+=(short1& a, const short1& b) { a.x += b.x; return a; }
__HIP_REMOTE_VFN short1& operator+=(short1& a, short b) { a.x += b; return a; }
__HIP_REMOTE_VFN short1 operator+(short1 a, const short1& b) { return a += b; }
__HIP_REMOTE_VFN short1 operator+(short1 a, short b) { return a += b; }
__HIP_REMOTE_VFN short1 operator+(short a, const short1& b) { short1 r; r.x = (short)(a + b.x); return r; }
__HIP_REMOTE_VFN short1& operator-=(short1& a, const short1& b) { a.x -= b.x; return a; }
__HIP_REMOTE_VFN short1& operator-=(short1& a, short b) { a.x -= b; return a; }
__HIP_REMOTE_VFN short1 operator-(short1 a, const short1& b) { return a -= b; }
__HIP_REMOTE_VFN short1 operator-(short1 a, short b) { return a -= b; }
__HIP_REMOTE_VFN short1 operator-(short a, const short1& b) { short1 r; r.x = (short)(a - b.x); return r; }
__HIP_REMOTE_VFN short1& operator*=(short1& a, const short1& b) { a.x *= b.x; return a; }
__HIP_REMOTE_VFN short1& operator*=(short1& a, short b) { a.x *= b; return a; }
__HIP_REMOTE_VFN short1 operator*(short1 a, const short1& b) { return a *= b; }
__HIP_REMOTE_VFN short1 operator*(short1 a, short b) { return a *= b; }
__HIP_REMOTE_VFN short1 operator*(short a, const short1& b) { short1 r; r.x = (short)(a * b.x); return r; }
__HIP_REMOTE_VFN short1& operator/=(short1& a, const short1& b) { a.x /= b.x; return a; }
__HIP_REMOTE_VFN short1& operator/=(short1& a, short b) { a.x /= b; return a; }
__HIP_REMOTE_VFN short1 operator/(short1 a, const short1& b) { return a /= b; }
__HIP_REMOTE_VFN short1 operator/(short1 a, short b) { return a /= b; }
__HIP_REMOTE_VFN short1 operator/(short a, const short1& b) { short1 r; r.x = (short)(a / b.x); return r; }
__HIP_REMOTE_VFN short1& operator%=(short1& a, const short1& b) { a.x %= b.x; return a; }
__HIP_REMOTE_VFN short1& operator%=(short1& a, short b) { a.x %= b; return a; }
__HIP_REMOTE_VFN short1 operator%(short1 a, const short1& b) { return a %= b; }
__HIP_REMOTE_VFN short1 operator%(short1 a, short b) { return a %= b; }
__HIP_REMOTE_VFN short1 operator%(short a, const short1& b) { short1 r; r.x = (short)(a % b.x); return r; }
__HIP_REMOTE_VFN short1& operator&=(short1& a, const short1& b) { a.x &= b.x; return a; }
__HIP_REMOTE_VFN short1& operator&=(short1& a, short b) { a.x &= b; return a; }
__HIP_REMOTE_VFN short1 operator&(short1 a, const short1& b) { return a &= b; }
__HIP_REMOTE_VFN short1 operator&(short1 a, short b) { return a &= b; }
__HIP_REMOTE_VFN short1 operator&(short a, const short1& b) { short1 r; r.x = (short)(a & b.x); return r; }
__HIP_REMOTE_VFN short1& operator|=(short1& a, const short1& b) { a.x |= b.x; return a; }
__HIP_REMOTE_VFN short1& operator|=(short1& a, short b) { a.x |= b; return a; }
__HIP_REMOTE_VFN short1 operator|(short1 a, const short1& b) { return a |= b; }
__HIP_REMOTE_VFN short1 operator|(short1 a, short b) { return a |= b; }
__HIP_REMOTE_VFN short1 operator|(short a, const short1& b) { short1 r; r.x = (short)(a | b.x); return r; }
__HIP_REMOTE_VFN short1& operator^=(short1& a, const short1& b) { a.x ^= b.x; return a; }
__HIP_REMOTE_VFN short1& operator^=(short1& a, short b) { a.x ^= b; return a; }
__HIP_REMOTE_VFN short1 operator^(short1 a, const short1& b) { return a ^= b; }
__HIP_REMOTE_VFN short1 operator^(short1 a, short b) { return a ^= b; }
__HIP_REMOTE_VFN short1 operator^(short a, const short1& b) { short1 r; r.x = (short)(a ^ b.x); return r; }
__HIP_REMOTE_VFN short1& operator<<=(short1& a, const short1& b) { a.x <<= b.x; return a; }
__HIP_REMOTE_VFN short1& operator<<=(short1& a, short b) { a.x <<= b; return a; }
__HIP_REMOTE_VFN short1 operator<<(short1 a, const short1& b) { return a <<= b; }
__HIP_REMOTE_VFN short1 operator<<(short1 a, short b) { return a <<= b; }
__HIP_REMOTE_VFN short1 operator<<(short a, const short1& b) { short1 r; r.x = (short)(a << b.x); return r; }
__HIP_REMOTE_VFN short1& operator>>=(short1& a, const short1& b) { a.x >>= b.x; return a; }
__HIP_REMOTE_VFN short1& operator>>=(short1& a, short b) { a.x >>= b; return a; }
__HIP_REMOTE_VFN short1 operator>>(short1 a, const short1& b) { return a >>= b; }
__HIP_REMOTE_VFN short1 operator>>(short1 a, short b) { return a >>= b; }
__HIP_REMOTE_VFN short1 operator>>(short a, const short1& b) { short1 r; r.x = (short)(a >> b.x); return r; }
__HIP_REMOTE_VFN short1 operator-(const short1& a) { short1 r; r.x = (short)-a.x; return r; }
__HIP_REMOTE_VFN short1 operator+(const short1& a) { return a; }
__HIP_REMOTE_VFN short1 operator~(const short1& a) { short1 r; r.x = (short)~a.x; return r; }
__HIP_REMOTE_VFN bool operator==(const short1& a, const short1& b) { return a.x == b.x; }
__HIP_REMOTE_VFN bool operator!=(const short1& a, const short1& b) { return !(a == b); }
/* short2 */
__HIP_REMOTE_VFN short2& operator+=(short2& a, const short2& b) { a.x += b.x; a.y += b.y; return a; }
__HIP_REMOTE_VFN short2& operator+=(short2& a, short b) { a.x += b; a.y += b; return a; }
__HIP_REMOTE_VFN short2 operator+(short2 a, const short2& b) { return a += b; }
__HIP_REMOTE_VFN short2 operator+(short2 a, short b) { return a += b; }
__HIP_REMOTE_VFN short2 operator+(short a, const short2& b) { short2 r; r.x = (short)(a + b.x); r.y = (short)(a + b.y); return r; }
__HIP_REMOTE_VFN short2& operator-=(short2& a, const short2& b) { a.x -= b.x; a.y -= b.y; return a; }
__HIP_REMOTE_VFN short2& operator-=(short2& a, short b) { a.x -= b; a.y -= b; return a; }
__HIP_REMOTE_VFN short2 operator-(short2 a, const short2& b) { return a -= b; }
__HIP_REMOTE_VFN short2 operator-(short2 a, short b) { return a -= b; }
__HIP_REMOTE_VFN short2 operator-(short a, const short2& b) { short2 r; r.x = (short)(a - b.x); r.y = (short)(a - b.y); return r; }
__HIP_REMOTE_VFN short2& operator*=(short2& a, const short2& b) { a.x *= b.x; a.y *= b.y; return a; }
__HIP_REMOTE_VFN short2& operator*=(short2& a, short b) { a.x *= b; a.y *= b; return a; }
__HIP_REMOTE_VFN short2 operator*(short2 a, const short2& b) { return a *= b; }
__HIP_REMOTE_VFN short2 operator*(short2 a, short b) { return a *= b; }
__HIP_REMOTE_VFN short2 operator*(short a, const short2& b) { short2 r; r.x = (short)(a * b.x); r.y = (short)(a * b.y); return r; }
__HIP_REMOTE_VFN short2& operator/=(short2& a, const short2& b) { a.x /= b.x; a.y /= b.y; return a; }
__HIP_REMOTE_VFN short2& operator/=(short2& a, short b) { a.x /= b; a.y /= b; return a; }
__HIP_REMOTE_VFN short2 operator/(short2 a, const short2& b) { return a /= b; }
__HIP_REMOTE_VFN short2 operator/(short2 a, short b) { return a /= b; }
__HIP_REMOTE_VFN short2 operator/(short a, const short2& b) { short2 r; r.x = (short)(a / b.x); r.y = (short)(a / b.y); return r; }
__HIP_REMOTE_VFN short2& operator%=(short2& a, const short2& b) { a.x %= b.x; a.y %= b.y; return a; }
__HIP_REMOTE_VFN short2& operator%=(short2& a, short b) { a.x %= b; a.y %= b; return a; }
__HIP_REMOTE_VFN short2 operator%(short2 a, const short2& b) { return a %= b; }
__HIP_REMOTE_VFN short2 operator%(short2 a, short b) { return a %= b; }
__HIP_REMOTE_VFN short2 operator%(short a, const short2& b) { short2 r; r.x = (short)(a % b.x); r.y = (short)(a % b.y); return r; }
__HIP_REMOTE_VFN short2& operator&=(short2& a, const short2& b) { a.x &= b.x; a.y &= b.y; return a; }
__HIP_REMOTE_VFN short2& operator&=(short2& a, short b) { a.x &= b; a.y &= b; return a; }
__HIP_REMOTE_VFN short2 operator&(short2 a, const short2& b) { return a &= b; }
__HIP_REMOTE_VFN short2 operator&(short2 a, short b) { return a &= b; }
__HIP_REMOTE_VFN short2 operator&(short a, const short2& b) { short2 r; r.x = (short)(a & b.x); r.y = (short)(a & b.y); return r; }
__HIP_REMOTE_VFN short2& operator|=(short2& a, const short2& b) { a.x |= b.x; a.y |= b.y; return a; }
__HIP_REMOTE_VFN short2& operator|=(short2& a, short b) { a.x |= b; a.y |= b; return a; }
__HIP_REMOTE_VFN short2 operator|(short2 a, const short2& b) { return a |= b; }
__HIP_REMOTE_VFN short2 operator|(short2 a, short b) { return a |= b; }
__HIP_REMOTE_VFN short2 operator|(short a, const short2& b) { short2 r; r.x = (short)(a | b.x); r.y = (short)(a | b.y); return r; }
__HIP_REMOTE_VFN short2& operator^=(short2& a, const short2& b) { a.x ^= b.x; a.y ^= b.y; return a; }
__HIP_REMOTE_VFN short2& operator^=(short2& a, short b) { a.x ^= b; a.y ^= b; return a; }
__HIP_REMOTE_VFN short2 operator^(short2 a, const short2& b) { return a ^= b; }
__HIP_REMOTE_VFN short2 operator^(short2 a, short b) { return a ^= b; }
__HIP_REMOTE_VFN short2 operator^(short a, const short2& b) { short2 r; r.x = (short)(a ^ b.x); r.y = (short)(a ^ b.y); return r; }
__HIP_REMOTE_VFN short2& operator<<=(short2& a, const short2& b) { a.x <<= b.x; a.y <<= b.y; return a; }
__HIP_REMOTE_VFN short2& operator<<=(short2& a, short b) { a.x <<= b; a.y <<= b; return a; }
__HIP_REMOTE_VFN short2 operator<<(short2 a, const short2& b) { return a <<= b; }
__HIP_REMOTE_VFN short2 operator<<(short2 a, short b) { return a <<= b; }
__HIP_REMOTE_VFN short2 operator<<(short a, const short2& b) { short2 r; r.x = (short)(a << b.x); r.y = (short)(a << b.y); return r; }
__HIP_REMOTE_VFN short2& operator>>=(short2& a, const short2& b) { a.x >>= b.x; a.y >>= b.y; return a; }
__HIP_REMOTE_VFN short2& operator>>=(short2& a, short b) { a.x >>= b; a.y >>= b; return a; }
__HIP_REMOTE_VFN short2 operator>>(short2 a, const short2& b) { return a >>= b; }
__HIP_REMOTE_VFN short2 operator>>(short2 a, short b) { return a >>= b; }
__HIP_REMOTE_VFN short2 operator>>(short a, const short2& b) { short2 r; r.x = (short)(a >> b.x); r.y = (short)(a >> b.y); return r; }
__HIP_REMOTE_VFN short2 operator-(const short2& a) { short2 r; r.x = (short)-a.x; r.y = (short)-a.y; return r; }
__HIP_REMOTE_VFN short2 operator+(const short2& a) { return a; }
__HIP_REMOTE_VFN short2 operator~(const short2& a) { short2 r; r.x = (short)~a.x; r.y = (short)~a.y; return r; }
__HIP_REMOTE_VFN bool operator==(const short2& a, const short2& b) { return a.x == b.x && a.y == b.y; }
__HIP_REMOTE_VFN bool operator!=(const short2& a, const short2& b) { return !(a == b); }
/* short3 */
__HIP_REMOTE_VFN short3& operator+=(short3& a, const short3& b) { a.x += b.x; a.y += b.y; a.z += b.z; return a; }
__HIP_REMOTE_VFN short3& operator+=(short3& a, short b) { a.x += b; a.y += b; a.z += b; return a; }
__HIP_REMOTE_VFN short3 operator+(short3 a, const short3& b) { return a += b; }
__HIP_REMOTE_VFN short3 operator+(short3 a, short b) { return a += b; }
__HIP_REMOTE_VFN short3 operator+(short a, const short3& b) { short3 r; r.x = (short)(a + b.x); r.y = (short)(a + b.y); r.z = (short)(a + b.z); return r; }
__HIP_REMOTE_VFN short3& operator-=(short3& a, const short3& b) { a.x -= b.x; a.y -= b.y; a.z -= b.z; return a; }
__HIP_REMOTE_VFN short3& operator-=(short3& a, short b) { a.x -= b; a.y -= b; a.z -= b; return a; }
__HIP_REMOTE_VFN short3 operator-(short3 a, const short3& b) { return a -= b; }
__HIP_REMOTE_VFN short3 operator-(short3 a, short b) { return a -= b; }
__HIP_REMOTE_VFN short3 operator-(short a, const short3& b) { short3 r; r.x = (short)(a - b.x); r.y = (short)(a - b.y); r.z = (short)(a - b.z); return r; }
__HIP_REMOTE_VFN short3& operator*=(short3& a, const short3& b) { a.x *= b.x; a.y *= b.y; a.z *= b.z; return a; }
__HIP_REMOTE_VFN short3& operator*=(short3& a, short b) { a.x *= b; a.y *= b; a.z *= b; return a; }
__HIP_REMOTE_VFN short3 operator*(short3 a, const short3& b) { return a *= b; }
__HIP_REMOTE_VFN short3 operator*(short3 a, short b) { return a *= b; }
__HIP_REMOTE_VFN short3 operator*(short a, const short3& b) { short3 r; r.x = (short)(a * b.x); r.y = (short)(a * b.y); r.z = (short)(a * b.z); return r; }
__HIP_REMOTE_VFN short3& operator/=(short3& a, const short3& b) { a.x /= b.x; a.y /= b.y; a.z /= b.z; return a; }
__HIP_REMOTE_VFN short3& operator/=(short3& a, short b) { a.x /= b; a.y /= b; a.z /= b; return a; }
__HIP_REMOTE_VFN short3 operator/(short3 a, const short3& b) { return a /= b; }
__HIP_REMOTE_VFN short3 operator/(short3 a, short b) { return a /= b; }
__HIP_REMOTE_VFN short3 operator/(short a, const short3& b) { short3 r; r.x = (short)(a / b.x); r.y = (short)(a / b.y); r.z = (short)(a / b.z); return r; }
__HIP_REMOTE_VFN short3& operator%=(short3& a, const short3& b) { a.x %= b.x; a.y %= b.y; a.z %= b.z; return a; }
__HIP_REMOTE_VFN short3& operator%=(short3& a, short b) { a.x %= b; a.y %= b; a.z %= b; return a; }
__HIP_REMOTE_VFN short3 operator%(short3 a, const short3& b) { return a %= b; }
__HIP_REMOTE_VFN short3 operator%(short3 a, short b) { return a %= b; }
__HIP_REMOTE_VFN short3 operator%(short a, const short3& b) { short3 r; r.x = (short)(a % b.x); r.y = (short)(a % b.y); r.z = (short)(a % b.z); return r; }
__HIP_REMOTE_VFN short3& operator&=(short3& a, const short3& b) { a.x &= b.x; a.y &= b.y; a.z &= b.z; return a; }
__HIP_REMOTE_VFN short3& operator&=(short3& a, short b) { a.x &= b; a.y &= b; a.z &= b; return a; }
__HIP_REMOTE_VFN short3 operator&(short3 a, const short3& b) { return a &= b; }
__HIP_REMOTE_VFN short3 operator&(short3 a, short b) { return a &= b; }
__HIP_REMOTE_VFN short3 operator&(short a, const short3& b) { short3 r; r.x = (short)(a & b.x); r.y = (short)(a & b.y); r.z = (short)(a & b.z); return r; }
__HIP_REMOTE_VFN short3& operator|=(short3& a, const short3& b) { a.x |= b.x; a.y |= b.y; a.z |= b.z; return a; }
__HIP_REMOTE_VFN short3& operator|=(short3& a, short b) { a.x |= b; a.y |= b; a.z |= b; return a; }
__HIP_REMOTE_VFN short3 operator|(short3 a, const short3& b) { return a |= b; }
__HIP_REMOTE_VFN short3 operator|(short3 a, short b) { return a |= b; }
__HIP_REMOTE_VFN short3 operator|(short a, const short3& b) { short3 r; r.x = (short)(a | b.x); r.y = (short)(a | b.y); r.z = (short)(a | b.z); return r; }
__HIP_REMOTE_VFN short3& operator^=(short3& a, const short3& b) { a.x ^= b.x; a.y ^= b.y; a.z ^= b.z; return a; }
__HIP_REMOTE_VFN short3& operator^=(short3& a, short b) { a.x ^= b; a.y ^= b; a.z ^= b; return a; }
__HIP_REMOTE_VFN short3 operator^(short3 a, const short3& b) { return a ^= b; }
__HIP_REMOTE_VFN short3 operator^(short3 a, short b) { return a ^= b; }
__HIP_REMOTE_VFN short3 operator^(short a, const short3& b) { short3 r; r.x = (short)(a ^ b.x); r.y = (short)(a ^ b.y); r.z = (short)(a ^ b.z); return r; }
__HIP_REMOTE_VFN short3& operator<<=(short3& a, const short3& b) { a.x <<= b.x; a.y <<= b.y; a.z <<= b.z; return a; }
__HIP_REMOTE_VFN short3& operator<<=(short3& a, short b) { a.x <<= b; a.y <<= b; a.z <<= b; return a; }
__HIP_REMOTE_VFN short3 operator<<(short3 a, const short3& b) { return a <<= b; }
__HIP_REMOTE_VFN short3 operator<<(short3 a, short b) { return a <<= b; }
__HIP_REMOTE_VFN short3 operator<<(short a, const short3& b) { short3 r; r.x = (short)(a << b.x); r.y = (short)(a << b.y); r.z = (short)(a << b.z); return r; }
__HIP_REMOTE_VFN short3& operator>>=(short3& a, const short3& b) { a.x >>= b.x; a.y >>= b.y; a.z >>= b.z; return a; }
__HIP_REMOTE_VFN short3& operator>>=(short3& a, short b) { a.x >>= b; a.y >>= b; a.z >>= b; return a; }
__HIP_REMOTE_VFN short3 operator>>(short3 a, const short3& b) { return a >>= b; }
__HIP_REMOTE_VFN short3 operator>>(short3 a, short b) { return a >>= b; }
__HIP_REMOTE_VFN short3 operator>>(short a, const short3& b) { short3 r; r.x = (short)(a >> b.x); r.y = (short)(a >> b.y); r.z = (short)(a >> b.z); return r; }
__HIP_REMOTE_VFN short3 operator-(const short3& a) { short3 r; r.x = (short)-a.x; r.y = (short)-a.y; r.z = (short)-a.z; return r; }
__HIP_REMOTE_VFN short3 operator+(const short3& a) { return a; }
__HIP_REMOTE_VFN short3 operator~(const short3& a) { short3 r; r.x = (short)~a.x; r.y = (short)~a.y; r.z = (short)~a.z; return r; }
__HIP_REMOTE_VFN bool operator==(const short3& a, const short3& b) { return a.x == b.x && a.y == b.y && a.z == b.z; }
__HIP_REMOTE_VFN bool operator!=(const short3& a, const short3& b) { return !(a == b); }
/* short4 */
__HIP_REMOTE_VFN short4& operator+=(short4& a, const short4& b) { a.x += b.x; a.y += b.y; a.z += b.z; a.w += b.w; return a; }
__HIP_REMOTE_VFN short4& operator+=(short4& a, short b) { a.x += b; a.y += b; a.z += b; a.w += b; return a; }
__HIP_REMOTE_VFN short4 operator+(short4 a, const short4& b) { return a += b; }
__HIP_REMOTE_VFN short4 operator+(short4 a, short b) { return a += b; }
__HIP_REMOTE_VFN short4 operator+(short a, const short4& b) { short4 r; r.x = (short)(a + b.x); r.y = (short)(a + b.y); r.z = (short)(a + b.z); r.w = (short)(a + b.w); return r; }
__HIP_REMOTE_VFN short4& operator-=(short4& a, const short4& b) { a.x -= b.x; a.y -= b.y; a.z -= b.z; a.w -= b.w; return a; }
__HIP_REMOTE_VFN short4& operator-=(short4& a, short b) { a.x -= b; a.y -= b; a.z -= b; a.w -= b; return a; }
__HIP_REMOTE_VFN short4 operator-(short4 a, const short4& b) { return a -= b; }
__HIP_REMOTE_VFN short4 operator-(short4 a, short b) { return a -= b; }
__HIP_REMOTE_VFN short4 operator-(short a, const short4& b) { short4 r; r.x = (short)(a - b.x); r.y = (short)(a - b.y); r.z = (short)(a - b.z); r.w = (short)(a - b.w); return r; }
__HIP_REMOTE_VFN short4& operator*=(short4& a, const short4& b) { a.x *= b.x; a.y *= b.y; a.z *= b.z; a.w *= b.w; return a; }
__HIP_REMOTE_VFN short4& operator*=(short4& a, short b) { a.x *= b; a.y *= b; a.z *= b; a.w *= b; return a; }
__HIP_REMOTE_VFN short4 operator*(short4 a, const short4& b) { return a *= b; }
__HIP_REMOTE_VFN short4 operator*(short4 a, short b) { return a *= b; }
__HIP_REMOTE_VFN short4 operator*(short a, const short4& b) { short4 r; r.x = (short)(a * b.x); r.y = (short)(a * b.y); r.z = (short)(a * b.z); r.w = (short)(a * b.w); return r; }
__HIP_REMOTE_VFN short4& operator/=(short4& a, const short4& b) { a.x /= b.x; a.y /= b.y; a.z /= b.z; a.w /= b.w; return a; }
__HIP_REMOTE_VFN short4& operator/=(short4& a, short b) { a.x /= b; a.y /= b; a.z /= b; a.w /= b; return a; }
__HIP_REMOTE_VFN short4 operator/(short4 a, const short4& b) { return a /= b; }
__HIP_REMOTE_VFN short4 operator/(short4 a, short b) { return a /= b; }
__HIP_REMOTE_VFN short4 operator/(short a, const short4& b) { short4 r; r.x = (short)(a / b.x); r.y = (short)(a / b.y); r.z = (short)(a / b.z); r.w = (short)(a / b.w); return r; }
__HIP_REMOTE_VFN short4& operator%=(short4& a, const short4& b) { a.x %= b.x; a.y %= b.y; a.z %= b.z; a.w %= b.w; return a; }
__HIP_REMOTE_VFN short4& operator%=(short4& a, short b) { a.x %= b; a.y %= b; a.z %= b; a.w %= b; return a; }
__HIP_REMOTE_VFN short4 operator%(short4 a, const short4& b) { return a %= b; }
__HIP_REMOTE_VFN short4 operator%(short4 a, short b) { return a %= b; }
__HIP_REMOTE_VFN short4 operator%(short a, const short4& b) { short4 r; r.x = (short)(a % b.x); r.y = (short)(a % b.y); r.z = (short)(a % b.z); r.w = (short)(a % b.w); return r; }
__HIP_REMOTE_VFN short4& operator&=(short4& a, const short4& b) { a.x &= b.x; a.y &= b.y; a.z &= b.z; a.w &= b.w; return a; }
__HIP_REMOTE_VFN short4& operator&=(short4& a, short b) { a.x &= b; a.y &= b; a.z &= b; a.w &= b; return a; }
__HIP_REMOTE_VFN short4 operator&(short4 a, const short4& b) { return a &= b; }
__HIP_REMOTE_VFN short4 operator&(short4 a, short b) { return a &= b; }
__HIP_REMOTE_VFN short4 operator&(short a, const short4& b) { short4 r; r.x = (short)(a & b.x); r.y = (short)(a & b.y); r.z = (short)(a & b.z); r.w = (short)(a & b.w); return r; }
__HIP_REMOTE_VFN short4& operator|=(short4& a, const short4& b) { a.x |= b.x; a.y |= b.y; a.z |= b.z; a.w |= b.w; return a; }
__HIP_REMOTE_VFN short4& operator|=(short4& a, short b) { a.x |= b; a.y |= b; a.z |= b; a.w |= b; return a; }
__HIP_REMOTE_VFN short4 operator|(short4 a, const short4& b) { return a |= b; }
__HIP_REMOTE_VFN short4 operator|(short4 a, short b) { return a |= b; }
__HIP_REMOTE_VFN short4 operator|(short a, const short4& b) { short4 r; r.x = (short)(a | b.x); r.y = (short)(a | b.y); r.z = (short)(a | b.z); r.w = (short)(a | b.w); return r; }
__HIP_REMOTE_VFN short4& operator^=(short4& a, const short4& b) { a.x ^= b.x; a.y ^= b.y; a.z ^= b.z; a.w ^= b.w; return a; }
__HIP_REMOTE_VFN short4& operator^=(short4& a, short b) { a.x ^= b; a.y ^= b; a.z ^= b; a.w ^= b; return a; }
__HIP_REMOTE_VFN short4 operator^(short4 a, const short4& b) { return a ^= b; }
__HIP_REMOTE_VFN short4 operator^(short4 a, short b) { return a ^= b; }
__HIP_REMOTE_VFN short4 operator^(short a, const short4& b) { short4 r; r.x = (short)(a ^ b.x); r.y = (short)(a ^ b.y); r.z = (short)(a ^ b.z); r.w = (short)(a ^ b.w); return r; }
__HIP_REMOTE_VFN short4& operator<<=(short4& a, const short4& b) { a.x <<= b.x; a.y <<= b.y; a.z <<= b.z; a.w <<= b.w; return a; }
__HIP_REMOTE_VFN short4& operator<<=(short4& a, short b) { a.x <<= b; a.y <<= b; a.z <<= b; a.w <<= b; return a; }
__HIP_REMOTE_VFN short4 operator<<(short4 a, const short4& b) { return a <<= b; }
__HIP_REMOTE_VFN short4 operator<<(short4 a, short b) { return a <<= b; }
__HIP_REMOTE_VFN short4 operator<<(short a, const short4& b) { short4 r; r.x = (short)(a << b.x); r.y = (short)(a << b.y); r.z = (short)(a << b.z); r.w = (short)(a << b.w); return r; }
__HIP_REMOTE_VFN short4& operator>>=(short4& a, const short4& b) { a.x >>= b.x; a.y >>= b.y; a.z >>= b.z; a.w >>= b.w; return a; }
__HIP_REMOTE_VFN short4& operator>>=(short4& a, short b) { a.x >>= b; a.y >>= b; a.z >>= b; a.w >>= b; return a; }
__HIP_REMOTE_VFN short4 operator>>(short4 a, const short4& b) { return a >>= b; }
__HIP_REMOTE_VFN short4 operator>>(short4 a, short b) { return a >>= b; }
__HIP_REMOTE_VFN short4 operator>>(short a, const short4& b) { short4 r; r.x = (short)(a >> b.x); r.y = (short)(a >> b.y); r.z = (short)(a >> b.z); r.w = (short)(a >> b.w); return r; }
__HIP_REMOTE_VFN short4 operator-(const short4& a) { short4 r; r.x = (short)-a.x; r.y = (short)-a.y; r.z = (short)-a.z; r.w = (short)-a.w; return r; }
__HIP_REMOTE_VFN short4 operator+(const short4& a) { return a; }
__HIP_REMOTE_VFN short4 operator~(const short4& a) { short4 r; r.x = (short)~a.x; r.y = (short)~a.y; r.z = (short)~a.z; r.w = (short)~a.w; return r; }
__HIP_REMOTE_VFN bool operator==(const short4& a, const short4& b) { return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w; }
__HIP_REMOTE_VFN bool operator!=(const short4& a, const short4& b) { return !(a == b); }
/* ushort1 */
__HIP_REMOTE_VFN ushort1& operator+=(ushort1& a, const ushort1& b) { a.x += b.x; return a; }
__HIP_REMOTE_VFN ushort1& operator+=(ushort1& a, unsigned short b) { a.x += b; return a; }
__HIP_REMOTE_VFN ushort1 operator+(ushort1 a, const ushort1& b) { return a += b; }
__HIP_REMOTE_VFN ushort1 operator+(ushort1 a, unsigned short b) { return a += b; }
__HIP_REMOTE_VFN ushort1 operator+(unsigned short a, const ushort1& b) { ushort1 r; r.x = (unsigned short)(a + b.x); return r; }
__HIP_REMOTE_VFN ushort1& operator-=(ushort1& a, const ushort1& b) { a.x -= b.x; return a; }
__HIP_REMOTE_VFN ushort1& operator-=(ushort1& a, unsigned short b) { a.x -= b; return a; }
__HIP_REMOTE_VFN ushort1 operator-(ushort1 a, const ushort1& b) { return a -= b; }
__HIP_REMOTE_VFN ushort1 operator-(ushort1 a, unsigned short b) { return a -= b; }
__HIP_REMOTE_VFN ushort1 operator-(unsigned short a, const ushort1& b) { ushort1 r; r.x = (unsigned short)(a - b.x); return r; }
__HIP_REMOTE_VFN ushort1& operator*=(ushort1& a, const ushort1& b) { a.x *= b.x; return a; }
__HIP_REMOTE_VFN ushort1& operator*=(ushort1& a, unsigned short b) { a.x *= b; return a; }
__HIP_REMOTE_VFN ushort1 operator*(ushort1 a, const ushort1& b) { return a *= b; }
__HIP_REMOTE_VFN ushort1 operator*(ushort1 a, unsigned short b) { return a *= b; }
__HIP_REMOTE_VFN ushort1 operator*(unsigned short a, const ushort1& b) { ushort1 r; r.x = (unsigned short)(a * b.x); return r; }
__HIP_REMOTE_VFN ushort1& operator/=(ushort1& a, const ushort1& b) { a.x /= b.x; return a; }
__HIP_REMOTE_VFN ushort1& operator/=(ushort1& a, unsigned short b) { a.x /= b; return a; }
__HIP_REMOTE_VFN ushort1 operator/(ushort1 a, const ushort1& b) { return a /= b; }
__HIP_REMOTE_VFN ushort1 operator/(ushort1 a, unsigned short b) { return a /= b; }
__HIP_REMOTE_VFN ushort1 operator/(unsigned short a, const ushort1& b) { ushort1 r; r.x = (unsigned short)(a / b.x); return r; }
__HIP_REMOTE_VFN ushort1& operator%=(ushort1& a, const ushort1& b) { a.x %= b.x; return a; }
__HIP_REMOTE_VFN ushort1& operator%=(ushort1& a, unsigned short b) { a.x %= b; return a; }
__HIP_REMOTE_VFN ushort1 operator%(ushort1 a, const ushort1& b) { return a %= b; }
__HIP_REMOTE_VFN ushort1 operator%(ushort1 a, unsigned short b) { return a %= b; }
__HIP_REMOTE_VFN ushort1 operator%(unsigned short a, const ushort1& b) { ushort1 r; r.x = (unsigned short)(a % b.x); return r; }
__HIP_REMOTE_VFN ushort1& operator&=(ushort1& a, const ushort1& b) { a.x &= b.x; return a; }
__HIP_REMOTE_VFN ushort1& operator&=(ushort1& a, unsigned short b) { a.x &= b; return a; }
__HIP_REMOTE_VFN ushort1 operator&(ushort1 a, const ushort1& b) { return a &= b; }
__HIP_REMOTE_VFN ushort1 operator&(ushort1 a, unsigned short b) { return a &= b; }
__HIP_REMOTE_VFN ushort1 operator&(unsigned short a, const ushort1& b) { ushort1 r; r.x = (unsigned short)(a & b.x); return r; }
__HIP_REMOTE_VFN ushort1& operator|=(ushort1& a, const ushort1& b) { a.x |= b.x; return a; }
__HIP_REMOTE_VFN ushort1& operator|=(ushort1& a, unsigned short b) { a.x |= b; return a; }
__HIP_REMOTE_VFN ushort1 operator|(ushort1 a, const ushort1& b) { return a |= b; }
__HIP_REMOTE_VFN ushort1 operator|(ushort1 a, unsigned short b) { return a |= b; }
__HIP_REMOTE_VFN ushort1 operator|(unsigned short a, const ushort1& b) { ushort1 r; r.x = (unsigned short)(a | b.x); return r; }
__HIP_REMOTE_VFN ushort1& operator^=(ushort1& a, const ushort1& b) { a.x ^= b.x; return a; }
__HIP_REMOTE_VFN ushort1& operator^=(ushort1& a, unsigned short b) { a.x ^= b; return a; }
__HIP_REMOTE_VFN ushort1 operator^(ushort1 a, const ushort1& b) { return a ^= b; }
__HIP_REMOTE_VFN ushort1 operator^(ushort1 a, unsigned short b) { return a ^= b; }
__HIP_REMOTE_VFN ushort1 operator^(unsigned short a, const ushort1& b) { ushort1 r; r.x = (unsigned short)(a ^ b.x); return r; }
__HIP_REMOTE_VFN ushort1& operator<<=(ushort1& a, const ushort1& b) { a.x <<= b.x; return a; }
__HIP_REMOTE_VFN ushort1& operator<<=(ushort1& a, unsigned short b) { a.x <<= b; return a; }
__HIP_REMOTE_VFN ushort1 operator<<(ushort1 a, const ushort1& b) { return a <<= b; }
__HIP_REMOTE_VFN ushort1 operator<<(ushort1 a, unsigned short b) { return a <<= b; }
__HIP_REMOTE_VFN ushort1 operator<<(unsigned short a, const ushort1& b) { ushort1 r; r.x = (unsigned short)(a << b.x); return r; }
__HIP_REMOTE_VFN ushort1& operator>>=(ushort1& a, const ushort1& b) { a.x >>= b.x; return a; }
__HIP_REMOTE_VFN ushort1& operator>>=(ushort1& a, unsigned short b) { a.x >>= b; return a; }
__HIP_REMOTE_VFN ushort1 operator>>(ushort1 a, const ushort1& b) { return a >>= b; }
__HIP_REMOTE_VFN ushort1 operator>>(ushort1 a, unsigned short b) { return a >>= b; }
__HIP_REMOTE_VFN ushort1 operator>>(unsigned short a, const ushort1& b) { ushort1 r; r.x = (unsigned short)(a >> b.x); return r; }
__HIP_REMOTE_VFN ushort1 operator-(const ushort1& a) { ushort1 r; r.x = (unsigned short)-a.x; return r; }
__HIP_REMOTE_VFN ushort1 operator+(const ushort1& a) { return a; }
__HIP_REMOTE_VFN ushort1 operator~(const ushort1& a) { ushort1 r; r.x = (unsigned short)~a.x; return r; }
__HIP_REMOTE_VFN bool operator==(const ushort1& a, const ushort1& b) { return a.x == b.x; }
__HIP_REMOTE_VFN bool operator!=(const ushort1& a, const ushort1& b) { return !(a == b); }
/* ushort2 */
__HIP_REMOTE_VFN ushort2& operator+=(ushort2& a, const ushort2& b) { a.x += b.x; a.y += b.y; return a; }
__HIP_REMOTE_VFN ushort2& operator+=(ushort2& a, unsigned short b) { a.x += b; a.y += b; return a; }
__HIP_REMOTE_VFN ushort2 operator+(ushort2 a, const ushort2& b) { return a += b; }
__HIP_REMOTE_VFN ushort2 operator+(ushort2 a, unsigned short b) { return a += b; }
__HIP_REMOTE_VFN ushort2 operator+(unsigned short a, const ushort2& b) { ushort2 r; r.x = (unsigned short)(a + b.x); r.y = (unsigned short)(a + b.y); return r; }
__HIP_REMOTE_VFN ushort2& operator-=(ushort2& a, const ushort2& b) { a.x -= b.x; a.y -= b.y; return a; }
__HIP_REMOTE_VFN ushort2& operator-=(ushort2& a, unsigned short b) { a.x -= b; a.y -= b; return a; }
__HIP_REMOTE_VFN ushort2 operator-(ushort2 a, const ushort2& b) { return a -= b; }
__HIP_REMOTE_VFN ushort2 operator-(ushort2 a, unsigned short b) { return a -= b; }
__HIP_REMOTE_VFN ushort2 operator-(unsigned short a, const ushort2& b) { ushort2 r; r.x = (unsigned short)(a - b.x); r.y = (unsigned short)(a - b.y); return r; }
__HIP_REMOTE_VFN ushort2& operator*=(ushort2& a, const ushort2& b) { a.x *= b.x; a.y *= b.y; return a; }
__HIP_REMOTE_VFN ushort2& operator*=(ushort2& a, unsigned short b) { a.x *= b; a.y *= b; return a; }
__HIP_REMOTE_VFN ushort2 operator*(ushort2 a, const ushort2& b) { return a *= b; }
__HIP_REMOTE_VFN ushort2 operator*(ushort2 a, unsigned short b) { return a *= b; }
__HIP_REMOTE_VFN ushort2 operator*(unsigned short a, const ushort2& b) { ushort2 r; r.x = (unsigned short)(a * b.x); r.y = (unsigned short)(a * b.y); return r; }
__HIP_REMOTE_VFN ushort2& operator/=(ushort2& a, const ushort2& b) { a.x /= b.x; a.y /= b.y; return a; }
__HIP_REMOTE_VFN ushort2& operator/=(ushort2& a, unsigned short b) { a.x /= b; a.y /= b; return a; }
__HIP_REMOTE_VFN ushort2 operator/(ushort2 a, const ushort2& b) { return a /= b; }
__HIP_REMOTE_VFN ushort2 operator/(ushort2 a, unsigned short b) { return a /= b; }
__HIP_REMOTE_VFN ushort2 operator/(unsigned short a, const ushort2& b) { ushort2 r; r.x = (unsigned short)(a / b.x); r.y = (unsigned short)(a / b.y); return r; }
__HIP_REMOTE_VFN ushort2& operator%=(ushort2& a, const ushort2& b) { a.x %= b.x; a.y %= b.y; return a; }
__HIP_REMOTE_VFN ushort2& operator%=(ushort2& a, unsigned short b) { a.x %= b; a.y %= b; return a; }
__HIP_REMOTE_VFN ushort2 operator%(ushort2 a, const ushort2& b) { return a %= b; }
__HIP_REMOTE_VFN ushort2 operator%(ushort2 a, unsigned short b) { return a %= b; }
__HIP_REMOTE_VFN ushort2 operator%(unsigned short a, const ushort2& b) { ushort2 r; r.x = (unsigned short)(a % b.x); r.y = (unsigned short)(a % b.y); return r; }
__HIP_REMOTE_VFN ushort2& operator&=(ushort2& a, const ushort2& b) { a.x &= b.x; a.y &= b.y; return a; }
__HIP_REMOTE_VFN ushort2& operator&=(ushort2& a, unsigned short b) { a.x &= b; a.y &= b; return a; }
__HIP_REMOTE_VFN ushort2 operator&(ushort2 a, const ushort2& b) { return a &= b; }
__HIP_REMOTE_VFN ushort2 operator&(ushort2 a, unsigned short b) { return a &= b; }
__HIP_REMOTE_VFN ushort2 operator&(unsigned short a, const ushort2& b) { ushort2 r; r.x = (unsigned short)(a & b.x); r.y = (unsigned short)(a & b.y); return r; }
__HIP_REMOTE_VFN ushort2& operator|=(ushort2& a, const ushort2& b) { a.x |= b.x; a.y |= b.y; return a; }
__HIP_REMOTE_VFN ushort2& operator|=(ushort2& a, unsigned short b) { a.x |= b; a.y |= b; return a; }
__HIP_REMOTE_VFN ushort2 operator|(ushort2 a, const ushort2& b) { return a |= b; }
__HIP_REMOTE_VFN ushort2 operator|(ushort2 a, unsigned short b) { return a |= b; }
__HIP_REMOTE_VFN ushort2 operator|(unsigned short a, const ushort2& b) { ushort2 r; r.x = (unsigned short)(a | b.x); r.y = (unsigned short)(a | b.y); return r; }
__HIP_REMOTE_VFN ushort2& operator^=(ushort2& a, const ushort2& b) { a.x ^= b.x; a.y ^= b.y; return a; }
__HIP_REMOTE_VFN ushort2& operator^=(ushort2& a, unsigned short b) { a.x ^= b; a.y ^= b; return a; }
__HIP_REMOTE_VFN ushort2 operator^(ushort2 a, const ushort2& b) { return a ^= b; }
__HIP_REMOTE_VFN ushort2 operator^(ushort2 a, unsigned short b) { return a ^= b; }
__HIP_REMOTE_VFN ushort2 operator^(unsigned short a, const ushort2& b) { ushort2 r; r.x = (unsigned short)(a ^ b.x); r.y = (unsigned short)(a ^ b.y); return r; }
__HIP_REMOTE_VFN ushort2& operator<<=(ushort2& a, const ushort2& b) { a.x <<= b.x; a.y <<= b.y; return a; }
__HIP_REMOTE_VFN ushort2& operator<<=(ushort2& a, unsigned short b) { a.x <<= b; a.y <<= b; return a; }
__HIP_REMOTE_VFN ushort2 operator<<(ushort2 a, const ushort2& b) { return a <<= b; }
__HIP_REMOTE_VFN ushort2 operator<<(ushort2 a, unsigned short b) { return a <<= b; }
__HIP_REMOTE_VFN ushort2 operator<<(unsigned short a, const ushort2& b) { ushort2 r; r.x = (unsigned short)(a << b.x); r.y = (unsigned short)(a << b.y); return r; }
__HIP_REMOTE_VFN ushort2& operator>>=(ushort2& a, const ushort2& b) { a.x >>= b.x; a.y >>= b.y; return a; }
__HIP_REMOTE_VFN ushort2& operator>>=(ushort2& a, unsigned short b) { a.x >>= b; a.y >>= b; return a; }
__HIP_REMOTE_VFN ushort2 operator>>(ushort2 a, const ushort2& b) { return a >>= b; }
__HIP_REMOTE_VFN ushort2 operator>>(ushort2 a, unsigned short b) { return a >>= b; }
__HIP_REMOTE_VFN ushort2 operator>>(unsigned short a, const ushort2& b) { ushort2 r; r.x = (unsigned short)(a >> b.x); r.y = (unsigned short)(a >> b.y); return r; }
__HIP_REMOTE_VFN ushort2 operator-(const ushort2& a) { ushort2 r; r.x = (unsigned short)-a.x; r.y = (unsigned short)-a.y; return r; }
__HIP_REMOTE_VFN ushort2 operator+(const ushort2& a) { return a; }
__HIP_REMOTE_VFN ushort2 operator~(const ushort2& a) { ushort2 r; r.x = (unsigned short)~a.x; r.y = (unsigned short)~a.y; return r; }
__HIP_REMOTE_VFN bool operator==(const ushort2& a, const ushort2& b) { return a.x == b.x && a.y == b.y; }
__HIP_REMOTE_VFN bool operator!=(const ushort2& a, const ushort2& b) { return !(a == b); }
/* ushort3 */
__HIP_REMOTE_VFN ushort3& operator+=(ushort3& a, const ushort3& b) { a.x += b.x; a.y += b.y; a.z += b.z; return a; }
__HIP_REMOTE_VFN ushort3& operator+=(ushort3& a, unsigned short b) { a.x += b; a.y += b; a.z += b; return a; }
__HIP_REMOTE_VFN ushort3 operator+(ushort3 a, const ushort3& b) { return a += b; }
__HIP_REMOTE_VFN ushort3 operator+(ushort3 a, unsigned short b) { return a += b; }
__HIP_REMOTE_VFN ushort3 operator+(unsigned short a, const ushort3& b) { ushort3 r; r.x = (unsigned short)(a + b.x); r.y = (unsigned short)(a + b.y); r.z = (unsigned short)(a + b.z); return r; }
__HIP_REMOTE_VFN ushort3& operator-=(ushort3& a, const ushort3& b) { a.x -= b.x; a.y -= b.y; a.z -= b.z; return a; }
__HIP_REMOTE_VFN ushort3& operator-=(ushort3& a, unsigned short b) { a.x -= b; a.y -= b; a.z -= b; return a; }
__HIP_REMOTE_VFN ushort3 operator-(ushort3 a, const ushort3& b) { return a -= b; }
__HIP_REMOTE_VFN ushort3 operator-(ushort3 a, unsigned short b) { return a -= b; }
__HIP_REMOTE_VFN ushort3 operator-(unsigned short a, const ushort3& b) { ushort3 r; r.x = (unsigned short)(a - b.x); r.y = (unsigned short)(a - b.y); r.z = (unsigned short)(a - b.z); return r; }
__HIP_REMOTE_VFN ushort3& operator*=(ushort3& a, const ushort3& b) { a.x *= b.x; a.y *= b.y; a.z *= b.z; return a; }
__HIP_REMOTE_VFN ushort3& operator*=(ushort3& a, unsigned short b) { a.x *= b; a.y *= b; a.z *= b; return a; }
__HIP_REMOTE_VFN ushort3 operator*(ushort3 a, const ushort3& b) { return a *= b; }
__HIP_REMOTE_VFN ushort3 operator*(ushort3 a, unsigned short b) { return a *= b; }
__HIP_REMOTE_VFN ushort3 operator*(unsigned short a, const ushort3& b) { ushort3 r; r.x = (unsigned short)(a * b.x); r.y = (unsigned short)(a * b.y); r.z = (unsigned short)(a * b.z); return r; }
__HIP_REMOTE_VFN ushort3& operator/=(ushort3& a, const ushort3& b) { a.x /= b.x; a.y /= b.y; a.z /= b.z; return a; }
__HIP_REMOTE_VFN ushort3& operator/=(ushort3& a, unsigned short b) { a.x /= b; a.y /= b; a.z /= b; return a; }
__HIP_REMOTE_VFN ushort3 operator/(ushort3 a, const ushort3& b) { return a /= b; }
__HIP_REMOTE_VFN ushort3 operator/(ushort3 a, unsigned short b) { return a /= b; }
__HIP_REMOTE_VFN ushort3 operator/(unsigned short a, const ushort3& b) { ushort3 r; r.x = (unsigned short)(a / b.x); r.y = (unsigned short)(a / b.y); r.z = (unsigned short)(a / b.z); return r; }
__HIP_REMOTE_VFN ushort3& operator%=(ushort3& a, const ushort3& b) { a.x %= b.x; a.y %= b.y; a.z %= b.z; return a; }
__HIP_REMOTE_VFN ushort3& operator%=(ushort3& a, unsigned short b) { a.x %= b; a.y %= b; a.z %= b; return a; }
__HIP_REMOTE_VFN ushort3 operator%(ushort3 a, const ushort3& b) { return a %= b; }
__HIP_REMOTE_VFN ushort3 operator%(ushort3 a, unsigned short b) { return a %= b; }
__HIP_REMOTE_VFN ushort3 operator%(unsigned short a, const ushort3& b) { ushort3 r; r.x = (unsigned short)(a % b.x); r.y = (unsigned short)(a % b.y); r.z = (unsigned short)(a % b.z); return r; }
__HIP_REMOTE_VFN ushort3& operator&=(ushort3& a, const ushort3& b) { a.x &= b.x; a.y &= b.y; a.z &= b.z; return a; }
__HIP_REMOTE_VFN ushort3& operator&=(ushort3& a, unsigned short b) { a.x &= b; a.y &= b; a.z &= b; return a; }
__HIP_REMOTE_VFN ushort3 operator&(ushort3 a, const ushort3& b) { return a &= b; }
__HIP_REMOTE_VFN ushort3 operator&(ushort3 a, unsigned short b) { return a &= b; }
__HIP_REMOTE_VFN ushort3 operator&(unsigned short a, const ushort3& b) { ushort3 r; r.x = (unsigned short)(a & b.x); r.y = (unsigned short)(a & b.y); r.z = (unsigned short)(a & b.z); return r; }
__HIP_REMOTE_VFN ushort3& operator|=(ushort3& a, const ushort3& b) { a.x |= b.x; a.y |= b.y; a.z |= b.z; return a; }
__HIP_REMOTE_VFN ushort3& operator|=(ushort3& a, unsigned short b) { a.x |= b; a.y |= b; a.z |= b; return a; }
__HIP_REMOTE_VFN ushort3 operator|(ushort3 a, const ushort3& b) { return a |= b; }
__HIP_REMOTE_VFN ushort3 operator|(ushort3 a, unsigned short b) { return a |= b; }
__HIP_REMOTE_VFN ushort3 operator|(unsigned short a, const ushort3& b) { ushort3 r; r.x = (unsigned short)(a | b.x); r.y = (unsigned short)(a | b.y); r.z = (unsigned short)(a | b.z); return r; }
__HIP_REMOTE_VFN ushort3& operator^=(ushort3& a, const ushort3& b) { a.x ^= b.x; a.y ^= b.y; a.z ^= b.z; return a; }
__HIP_REMOTE_VFN ushort3& operator^=(ushort3& a, unsigned short b) { a.x ^= b; a.y ^= b; a.z ^= b; return a; }
__HIP_REMOTE_VFN ushort3 operator^(ushort3 a, const ushort3& b) { return a ^= b; }
__HIP_REMOTE_VFN ushort3 operator^(ushort3 a, unsigned short b) { return a ^= b; }
__HIP_REMOTE_VFN ushort3 operator^(unsigned short a, const ushort3& b) { ushort3 r; r.x = (unsigned short)(a ^ b.x); r.y = (unsigned short)(a ^ b.y); r.z = (unsigned short)(a ^ b.z); return r; }
__HIP_REMOTE_VFN ushort3& operator<<=(ushort3& a, const ushort3& b) { a.x <<= b.x; a.y <<= b.y; a.z <<= b.z; return a; }
__HIP_REMOTE_VFN ushort3& operator<<=(ushort3& a, unsigned short b) { a.x <<= b; a.y <<= b; a.z <<= b; return a; }
__HIP_REMOTE_VFN ushort3 operator<<(ushort3 a, const ushort3& b) { return a <<= b; }
__HIP_REMOTE_VFN ushort3 operator<<(ushort3 a, unsigned short b) { return a <<= b; }
__HIP_REMOTE_VFN ushort3 operator<<(unsigned short a, const ushort3& b) { ushort3 r; r.x = (unsigned short)(a << b.x); r.y = (unsigned short)(a << b.y); r.z = (unsigned short)(a << b.z); return r; }
__HIP_REMOTE_VFN ushort3& operator>>=(ushort3& a, const ushort3& b) { a.x >>= b.x; a.y >>= b.y; a.z >>= b.z; return a; }
__HIP_REMOTE_VFN ushort3& operator>>=(ushort3& a, unsigned short b) { a.x >>= b; a.y >>= b; a.z >>= b; return a; }
__HIP_REMOTE_VFN ushort3 operator>>(ushort3 a, const ushort3& b) { return a >>= b; }
__HIP_REMOTE_VFN ushort3 operator>>(ushort3 a, unsigned short b) { return a >>= b; }
__HIP_REMOTE_VFN ushort3 operator>>(unsigned short a, const ushort3& b) { ushort3 r; r.x = (unsigned short)(a >> b.x); r.y = (unsigned short)(a >> b.y); r.z = (unsigned short)(a >> b.z); return r; }
__HIP_REMOTE_VFN ushort3 operator-(const ushort3& a) { ushort3 r; r.x = (unsigned short)-a.x; r.y = (unsigned short)-a.y; r.z = (unsigned short)-a.z; return r; }
__HIP_REMOTE_VFN ushort3 operator+(const ushort3& a) { return a; }
__HIP_REMOTE_VFN ushort3 operator~(const ushort3& a) { ushort3 r; r.x = (unsigned short)~a.x; r.y = (unsigned short)~a.y; r.z = (unsigned short)~a.z; return r; }
__HIP_REMOTE_VFN bool operator==(const ushort3& a, const ushort3& b) { return a.x == b.x && a.y == b.y && a.z == b.z; }
__HIP_REMOTE_VFN bool operator!=(const ushort3& a, const ushort3& b) { return !(a == b); }
/* ushort4 */
__HIP_REMOTE_VFN ushort4& operator+=(ushort4& a, const ushort4& b) { a.x += b.x; a.y += b.y; a.z += b.z; a.w += b.w; return a; }
__HIP_REMOTE_VFN ushort4& operator+=(ushort4& a, unsigned short b) { a.x += b; a.y += b; a.z += b; a.w += b; return a; }
__HIP_REMOTE_VFN ushort4 operator+(ushort4 a, const ushort4& b) { return a += b; }
__HIP_REMOTE_VFN ushort4 operator+(ushort4 a, unsigned short b) { return a += b; }
__HIP_REMOTE_VFN ushort4 operator+(unsigned short a, const ushort4& b) { ushort4 r; r.x = (unsigned short)(a + b.x); r.y = (unsigned short)(a + b.y); r.z = (unsigned short)(a + b.z); r.w = (unsigned short)(a + b.w); return r; }
__HIP_REMOTE_VFN ushort4& operator-=(ushort4& a, const ushort4& b) { a.x -= b.x; a.y -= b.y; a.z -= b.z; a.w -= b.w; return a; }
__HIP_REMOTE_VFN ushort4& operator-=(ushort4& a, unsigned short b) { a.x -= b; a.y -= b; a.z -= b; a.w -= b; return a; }
__HIP_REMOTE_VFN ushort4 operator-(ushort4 a, const ushort4& b) { return a -= b; }
__HIP_REMOTE_VFN ushort4 operator-(ushort4 a, unsigned short b) { return a -= b; }
__HIP_REMOTE_VFN ushort4 operator-(unsigned short a, const ushort4& b) { ushort4 r; r.x = (unsigned short)(a - b.x); r.y = (unsigned short)(a - b.y); r.z = (unsigned short)(a - b.z); r.w = (unsigned short)(a - b.w); return r; }
__HIP_REMOTE_VFN ushort4& operator*=(ushort4& a, const ushort4& b) { a.x *= b.x; a.y *= b.y; a.z *= b.z; a.w *= b.w; return a; }
__HIP_REMOTE_VFN ushort4& operator*=(ushort4& a, unsigned short b) { a.x *= b; a.y *= b; a.z *= b; a.w *= b; return a; }
__HIP_REMOTE_VFN ushort4 operator*(ushort4 a, const ushort4& b) { return a *= b; }
__HIP_REMOTE_VFN ushort4 operator*(ushort4 a, unsigned short b) { return a *= b; }
__HIP_REMOTE_VFN ushort4 operator*(unsigned short a, const ushort4& b) { ushort4 r; r.x = (unsigned short)(a * b.x); r.y = (unsigned short)(a * b.y); r.z = (unsigned short)(a * b.z); r.w = (unsigned short)(a * b.w); return r; }
__HIP_REMOTE_VFN ushort4& operator/=(ushort4& a, const ushort4& b) { a.x /= b.x; a.y /= b.y; a.z /= b.z; a.w /= b.w; return a; }
__HIP_REMOTE_VFN ushort4& operator/=(ushort4& a, unsigned short b) { a.x /= b; a.y /= b; a.z /= b; a.w /= b; return a; }
__HIP_REMOTE_VFN ushort4 operator/(ushort4 a, const ushort4& b) { return a /= b; }
__HIP_REMOTE_VFN ushort4 operator/(ushort4 a, unsigned short b) { return a /= b; }
__HIP_REMOTE_VFN ushort4 operator/(unsigned short a, const ushort4& b) { ushort4 r; r.x = (unsigned short)(a / b.x); r.y = (unsigned short)(a / b.y); r.z = (unsigned short)(a / b.z); r.w = (unsigned short)(a / b.w); return r; }
__HIP_REMOTE_VFN ushort4& operator%=(ushort4& a, const ushort4& b) { a.x %= b.x; a.y %= b.y; a.z %= b.z; a.w %= b.w; return a; }
__HIP_REMOTE_VFN ushort4& operator%=(ushort4& a, unsigned short b) { a.x %= b; a.y %= b; a.z %= b; a.w %= b; return a; }
__HIP_REMOTE_VFN ushort4 operator%(ushort4 a, const ushort4& b) { return a %= b; }
__HIP_REMOTE_VFN ushort4 operator%(ushort4 a, unsigned short b) { return a %= b; }
__HIP_REMOTE_VFN ushort4 operator%(unsigned short a, const ushort4& b) { ushort4 r; r.x = (unsigned short)(a % b.x); r.y = (unsigned short)(a % b.y); r.z = (unsigned short)(a % b.z); r.w = (unsigned short)(a % b.w); return r; }
__HIP_REMOTE_VFN ushort4& operator&=(ushort4& a, const ushort4& b) { a.x &= b.x; a.y &= b.y; a.z &= b.z; a.w &= b.w; return a; }
__HIP_REMOTE_VFN ushort4& operator&=(ushort4& a, unsigned short b) { a.x &= b; a.y &= b; a.z &= b; a.w &= b; return a; }
__HIP_REMOTE_VFN ushort4 operator&(ushort4 a, const ushort4& b) { return a &= b; }
__HIP_REMOTE_VFN ushort4 operator&(ushort4 a, unsigned short b) { return a &= b; }
__HIP_REMOTE_VFN ushort4 operator&(unsigned short a, const ushort4& b) { ushort4 r; r.x = (unsigned short)(a & b.x); r.y = (unsigned short)(a & b.y); r.z = (unsigned short)(a & b.z); r.w = (unsigned short)(a & b.w); return r; }
__HIP_REMOTE_VFN ushort4& operator|=(ushort4& a, const ushort4& b) { a.x |= b.x; a.y |= b.y; a.z |= b.z; a.w |= b.w; return a; }
__HIP_REMOTE_VFN ushort4& operator|=(ushort4& a, unsigned short b) { a.x |= b; a.y |= b; a.z |= b; a.w |= b; return a; }
__HIP_REMOTE_VFN ushort4 operator|(ushort4 a, const ushort4& b) { return a |= b; }
__HIP_REMOTE_VFN ushort4 operator|(ushort4 a, unsigned short b) { return a |= b; }
__HIP_REMOTE_VFN ushort4 operator|(unsigned short a, const ushort4& b) { ushort4 r; r.x = (unsigned short)(a | b.x); r.y = (unsigned short)(a | b.y); r.z = (unsigned short)(a | b.z); r.w = (unsigned short)(a | b.w); return r; }
__HIP_REMOTE_VFN ushort4& operator^=(ushort4& a, const ushort4& b) { a.x ^= b.x; a.y ^= b.y; a.z ^= b.z; a.w ^= b.w; return a; }
__HIP_REMOTE_VFN ushort4& operator^=(ushort4& a, unsigned short b) { a.x ^= b; a.y ^= b; a.z ^= b; a.w ^= b; return a; }
__HIP_REMOTE_VFN ushort4 operator^(ushort4 a, const ushort4& b) { return a ^= b; }
__HIP_REMOTE_VFN ushort4 operator^(ushort4 a, unsigned short b) { return a ^= b; }
__HIP_REMOTE_VFN ushort4 operator^(unsigned short a, const ushort4& b) { ushort4 r; r.x = (unsigned short)(a ^ b.x); r.y = (unsigned short)(a ^ b.y); r.z = (unsigned short)(a ^ b.z); r.w = (unsigned short)(a ^ b.w); return r; }
__HIP_REMOTE_VFN ushort4& operator<<=(ushort4& a, const ushort4& b) { a.x <<= b.x; a.y <<= b.y; a.z <<= b.z; a.w <<= b.w; return a; }
__HIP_REMOTE_VFN ushort4& operator<<=(ushort4& a, unsigned short b) { a.x <<= b; a.y <<= b; a.z <<= b; a.w <<= b; return a; }
__HIP_REMOTE_VFN ushort4 operator<<(ushort4 a, const ushort4& b) { return a <<= b; }
__HIP_REMOTE_VFN ushort4 operator<<(ushort4 a, unsigned short b) { return a <<= b; }
__HIP_REMOTE_VFN ushort4 operator<<(unsigned short a, const ushort4& b) { ushort4 r; r.x = (unsigned short)(a << b.x); r.y = (unsigned short)(a << b.y); r.z = (unsigned short)(a << b.z); r.w = (unsigned short)(a << b.w); return r; }
__HIP_REMOTE_VFN ushort4& operator>>=(ushort4& a, const ushort4& b) { a.x >>= b.x; a.y >>= b.y; a.z >>= b.z; a.w >>= b.w; return a; }
__HIP_REMOTE_VFN ushort4& operator>>=(ushort4& a, unsigned short b) { a.x >>= b; a.y >>= b; a.z >>= b; a.w >>= b; return a; }
__HIP_REMOTE_VFN ushort4 operator>>(ushort4 a, const ushort4& b) { return a >>= b; }
__HIP_REMOTE_VFN ushort4 operator>>(ushort4 a, unsigned short b) { return a >>= b; }
__HIP_REMOTE_VFN ushort4 operator>>(unsigned short a, const ushort4& b) { ushort4 r; r.x = (unsigned short)(a >> b.x); r.y = (unsigned short)(a >> b.y); r.z = (unsigned short)(a >> b.z); r.w = (unsigned short)(a >> b.w); return r; }
__HIP_REMOTE_VFN ushort4 operator-(const ushort4& a) { ushort4 r; r.x = (unsigned short)-a.x; r.y = (unsigned short)-a.y; r.z = (unsigned short)-a.z; r.w = (unsigned short)-a.w; return r; }
__HIP_REMOTE_VFN ushort4 operator+(const ushort4& a) { return a; }
__HIP_REMOTE_VFN ushort4 operator~(const ushort4& a) { ushort4 r; r.x = (unsigned short)~a.x; r.y = (unsigned short)~a.y; r.z = (unsigned short)~a.z; r.w = (unsigned short)~a.w; return r; }
__HIP_REMOTE_VFN bool operator==(const ushort4& a, const ushort4& b) { return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w; }
__HIP_REMOTE_VFN bool operator!=(const ushort4& a, const ushort4& b) { return !(a == b); }
/* int1 */
__HIP_REMOTE_VFN int1& operator+=(int1& a, const int1& b) { a.x += b.x; return a; }
__HIP_REMOTE_VFN int1& operator+=(int1& a, int b) { a.x += b; return a; }
__HIP_REMOTE_VFN int1 operator+(int1 a, const int1& b) { return a += b; }
__HIP_REMOTE_VFN int1 operator+(int1 a, int b) { return a += b; }
__HIP_REMOTE_VFN int1 operator+(int a, const int1& b) { int1 r; r.x = (int)(a + b.x); return r; }
__HIP_REMOTE_VFN int1& operator-=(int1& a, const int1& b) { a.x -= b.x; return a; }
__HIP_REMOTE_VFN int1& operator-=(int1& a, int b) { a.x -= b; return a; }
__HIP_REMOTE_VFN int1 operator-(int1 a, const int1& b) { return a -= b; }
__HIP_REMOTE_VFN int1 operator-(int1 a, int b) { return a -= b; }
__HIP_REMOTE_VFN int1 operator-(int a, const int1& b) { int1 r; r.x = (int)(a - b.x); return r; }
__HIP_REMOTE_VFN int1& operator*=(int1& a, const int1& b) { a.x *= b.x; return a; }
__HIP_REMOTE_VFN int1& operator*=(int1& a, int b) { a.x *= b; return a; }
__HIP_REMOTE_VFN int1 operator*(int1 a, const int1& b) { return a *= b; }
__HIP_REMOTE_VFN int1 operator*(int1 a, int b) { return a *= b; }
__HIP_REMOTE_VFN int1 operator*(int a, const int1& b) { int1 r; r.x = (int)(a * b.x); return r; }
__HIP_REMOTE_VFN int1& operator/=(int1& a, const int1& b) { a.x /= b.x; return a; }
__HIP_REMOTE_VFN int1& operator/=(int1& a, int b) { a.x /= b; return a; }
__HIP_REMOTE_VFN int1 operator/(int1 a, const int1& b) { return a /= b; }
__HIP_REMOTE_VFN int1 operator/(int1 a, int b) { return a /= b; }
__HIP_REMOTE_VFN int1 operator/(int a, const int1& b) { int1 r; r.x = (int)(a / b.x); return r; }
__HIP_REMOTE_VFN int1& operator%=(int1& a, const int1& b) { a.x %= b.x; return a; }
__HIP_REMOTE_VFN int1& operator%=(int1& a, int b) { a.x %= b; return a; }
__HIP_REMOTE_VFN int1 operator%(int1 a, const int1& b) { return a %= b; }
__HIP_REMOTE_VFN int1 operator%(int1 a, int b) { return a %= b; }
__HIP_REMOTE_VFN int1 operator%(int a, const int1& b) { int1 r; r.x = (int)(a % b.x); return r; }
__HIP_REMOTE_VFN int1& operator&=(int1& a, const int1& b) { a.x &= b.x; return a; }
__HIP_REMOTE_VFN int1& operator&=(int1& a, int b) { a.x &= b; return a; }
__HIP_REMOTE_VFN int1 operator&(int1 a, const int1& b) { return a &= b; }
__HIP_REMOTE_VFN int1 operator&(int1 a, int b) { return a &= b; }
__HIP_REMOTE_VFN int1 operator&(int a, const int1& b) { int1 r; r.x = (int)(a & b.x); return r; }
__HIP_REMOTE_VFN int1& operator|=(int1& a, const int1& b) { a.x |= b.x; return a; }
__HIP_REMOTE_VFN int1& operator|=(int1& a, int b) { a.x |= b; return a; }
__HIP_REMOTE_VFN int1 operator|(int1 a, const int1& b) { return a |= b; }
__HIP_REMOTE_VFN int1 operator|(int1 a, int b) { return a |= b; }
__HIP_REMOTE_VFN int1 operator|(int a, const int1& b) { int1 r; r.x = (int)(a | b.x); return r; }
__HIP_REMOTE_VFN int1& operator^=(int1& a, const int1& b) { a.x ^= b.x; return a; }
__HIP_REMOTE_VFN int1& operator^=(int1& a, int b) { a.x ^= b; return a; }
__HIP_REMOTE_VFN int1 operator^(int1 a, const int1& b) { return a ^= b; }
__HIP_REMOTE_VFN int1 operator^(int1 a, int b) { return a ^= b; }
__HIP_REMOTE_VFN int1 operator^(int a, const int1& b) { int1 r; r.x = (int)(a ^ b.x); return r; }
__HIP_REMOTE_VFN int1& operator<<=(int1& a, const int1& b) { a.x <<= b.x; return a; }
__HIP_REMOTE_VFN int1& operator<<=(int1& a, int b) { a.x <<= b; return a; }
__HIP_REMOTE_VFN int1 operator<<(int1 a, const int1& b) { return a <<= b; }
__HIP_REMOTE_VFN int1 operator<<(int1 a, int b) { return a <<= b; }
__HIP_REMOTE_VFN int1 operator<<(int a, const int1& b) { int1 r; r.x = (int)(a << b.x); return r; }
__HIP_REMOTE_VFN int1& operator>>=(int1& a, const int1& b) { a.x >>= b.x; return a; }
__HIP_REMOTE_VFN int1& operator>>=(int1& a, int b) { a.x >>= b; return a; }
__HIP_REMOTE_VFN int1 operator>>(int1 a, const int1& b) { return a >>= b; }
__HIP_REMOTE_VFN int1 operator>>(int1 a, int b) { return a >>= b; }
__HIP_REMOTE_VFN int1 operator>>(int a, const int1& b) { int1 r; r.x = (int)(a >> b.x); return r; }
__HIP_REMOTE_VFN int1 operator-(const int1& a) { int1 r; r.x = (int)-a.x; return r; }
__HIP_REMOTE_VFN int1 operator+(const int1& a) { return a; }
__HIP_REMOTE_VFN int1 operator~(const int1& a) { int1 r; r.x = (int)~a.x; return r; }
__HIP_REMOTE_VFN bool operator==(const int1& a, const int1& b) { return a.x == b.x; }
__HIP_REMOTE_VFN bool operator!=(const int1& a, const int1& b) { return !(a == b); }
/* int2 */
__HIP_REMOTE_VFN int2& operator+=(int2& a, const int2& b) { a.x += b.x; a.y += b.y; return a; }
__HIP_REMOTE_VFN int2& operator+=(int2& a, int b) { a.x += b; a.y += b; return a; }
__HIP_REMOTE_VFN int2 operator+(int2 a, const int2& b) { return a += b; }
__HIP_REMOTE_VFN int2 operator+(int2 a, int b) { return a += b; }
__HIP_REMOTE_VFN int2 operator+(int a, const int2& b) { int2 r; r.x = (int)(a + b.x); r.y = (int)(a + b.y); return r; }
__HIP_REMOTE_VFN int2& operator-=(int2& a, const int2& b) { a.x -= b.x; a.y -= b.y; return a; }
__HIP_REMOTE_VFN int2& operator-=(int2& a, int b) { a.x -= b; a.y -= b; return a; }
__HIP_REMOTE_VFN int2 operator-(int2 a, const int2& b) { return a -= b; }
__HIP_REMOTE_VFN int2 operator-(int2 a, int b) { return a -= b; }
__HIP_REMOTE_VFN int2 operator-(int a, const int2& b) { int2 r; r.x = (int)(a - b.x); r.y = (int)(a - b.y); return r; }
__HIP_REMOTE_VFN int2& operator*=(int2& a, const int2& b) { a.x *= b.x; a.y *= b.y; return a; }
__HIP_REMOTE_VFN int2& operator*=(int2& a, int b) { a.x *= b; a.y *= b; return a; }
__HIP_REMOTE_VFN int2 operator*(int2 a, const int2& b) { return a *= b; }
__HIP_REMOTE_VFN int2 operator*(int2 a, int b) { return a *= b; }
__HIP_REMOTE_VFN int2 operator*(int a, const int2& b) { int2 r; r.x = (int)(a * b.x); r.y = (int)(a * b.y); return r; }
__HIP_REMOTE_VFN int2& operator/=(int2& a, const int2& b) { a.x /= b.x; a.y /= b.y; return a; }
__HIP_REMOTE_VFN int2& operator/=(int2& a, int b) { a.x /= b; a.y /= b; return a; }
__HIP_REMOTE_VFN int2 operator/(int2 a, const int2& b) { return a /= b; }
__HIP_REMOTE_VFN int2 operator/(int2 a, int b) { return a /= b; }
__HIP_REMOTE_VFN int2 operator/(int a, const int2& b) { int2 r; r.x = (int)(a / b.x); r.y = (int)(a / b.y); return r; }
__HIP_REMOTE_VFN int2& operator%=(int2& a, const int2& b) { a.x %= b.x; a.y %= b.y; return a; }
__HIP_REMOTE_VFN int2& operator%=(int2& a, int b) { a.x %= b; a.y %= b; return a; }
__HIP_REMOTE_VFN int2 operator%(int2 a, const int2& b) { return a %= b; }
__HIP_REMOTE_VFN int2 operator%(int2 a, int b) { return a %= b; }
__HIP_REMOTE_VFN int2 operator%(int a, const int2& b) { int2 r; r.x = (int)(a % b.x); r.y = (int)(a % b.y); return r; }
__HIP_REMOTE_VFN int2& operator&=(int2& a, const int2& b) { a.x &= b.x; a.y &= b.y; return a; }
__HIP_REMOTE_VFN int2& operator&=(int2& a, int b) { a.x &= b; a.y &= b; return a; }
__HIP_REMOTE_VFN int2 operator&(int2 a, const int2& b) { return a &= b; }
__HIP_REMOTE_VFN int2 operator&(int2 a, int b) { return a &= b; }
__HIP_REMOTE_VFN int2 operator&(int a, const int2& b) { int2 r; r.x = (int)(a & b.x); r.y = (int)(a & b.y); return r; }
__HIP_REMOTE_VFN int2& operator|=(int2& a, const int2& b) { a.x |= b.x; a.y |= b.y; return a; }
__HIP_REMOTE_VFN int2& operator|=(int2& a, int b) { a.x |= b; a.y |= b; return a; }
__HIP_REMOTE_VFN int2 operator|(int2 a, const int2& b) { return a |= b; }
__HIP_REMOTE_VFN int2 operator|(int2 a, int b) { return a |= b; }
__HIP_REMOTE_VFN int2 operator|(int a, const int2& b) { int2 r; r.x = (int)(a | b.x); r.y = (int)(a | b.y); return r; }
__HIP_REMOTE_VFN int2& operator^=(int2& a, const int2& b) { a.x ^= b.x; a.y ^= b.y; return a; }
__HIP_REMOTE_VFN int2& operator^=(int2& a, int b) { a.x ^= b; a.y ^= b; return a; }
__HIP_REMOTE_VFN int2 operator^(int2 a, const int2& b) { return a ^= b; }
__HIP_REMOTE_VFN int2 operator^(int2 a, int b) { return a ^= b; }
__HIP_REMOTE_VFN int2 operator^(int a, const int2& b) { int2 r; r.x = (int)(a ^ b.x); r.y = (int)(a ^ b.y); return r; }
__HIP_REMOTE_VFN int2& operator<<=(int2& a, const int2& b) { a.x <<= b.x; a.y <<= b.y; return a; }
__HIP_REMOTE_VFN int2& operator<<=(int2& a, int b) { a.x <<= b; a.y <<= b; return a; }
__HIP_REMOTE_VFN int2 operator<<(int2 a, const int2& b) { return a <<= b; }
__HIP_REMOTE_VFN int2 operator<<(int2 a, int b) { return a <<= b; }
__HIP_REMOTE_VFN int2 operator<<(int a, const int2& b) { int2 r; r.x = (int)(a << b.x); r.y = (int)(a << b.y); return r; }
__HIP_REMOTE_VFN int2& operator>>=(int2& a, const int2& b) { a.x >>= b.x; a.y >>= b.y; return a; }
__HIP_REMOTE_VFN int2& operator>>=(int2& a, int b) { a.x >>= b; a.y >>= b; return a; }
__HIP_REMOTE_VFN int2 operator>>(int2 a, const int2& b) { return a >>= b; }
__HIP_REMOTE_VFN int2 operator>>(int2 a, int b) { return a >>= b; }
__HIP_REMOTE_VFN int2 operator>>(int a, const int2& b) { int2 r; r.x = (int)(a >> b.x); r.y = (int)(a >> b.y); return r; }
__HIP_REMOTE_VFN int2 operator-(const int2& a) { int2 r; r.x = (int)-a.x; r.y = (int)-a.y; return r; }
__HIP_REMOTE_VFN int2 operator+(const int2& a) { return a; }
__HIP_REMOTE_VFN int2 operator~(const int2& a) { int2 r; r.x = (int)~a.x; r.y = (int)~a.y; return r; }
__HIP_REMOTE_VFN bool operator==(const int2& a, const int2& b) { return a.x == b.x && a.y == b.y; }
__HIP_REMOTE_VFN bool operator!=(const int2& a, const int2& b) { return !(a == b); }
/* int3 */
__HIP_REMOTE_VFN int3& operator+=(int3& a, const int3& b) { a.x += b.x; a.y += b.y; a.z += b.z; return a; }
__HIP_REMOTE_VFN int3& operator+=(int3& a, int b) { a.x += b; a.y += b; a.z += b; return a; }
__HIP_REMOTE_VFN int3 operator+(int3 a, const int3& b) { return a += b; }
__HIP_REMOTE_VFN int3 operator+(int3 a, int b) { return a += b; }
__HIP_REMOTE_VFN int3 operator+(int a, const int3& b) { int3 r; r.x = (int)(a + b.x); r.y = (int)(a + b.y); r.z = (int)(a + b.z); return r; }
__HIP_REMOTE_VFN int3& operator-=(int3& a, const int3& b) { a.x -= b.x; a.y -= b.y; a.z -= b.z; return a; }
__HIP_REMOTE_VFN int3& operator-=(int3& a, int b) { a.x -= b; a.y -= b; a.z -= b; return a; }
__HIP_REMOTE_VFN int3 operator-(int3 a, const int3& b) { return a -= b; }
__HIP_REMOTE_VFN int3 operator-(int3 a, int b) { return a -= b; }
__HIP_REMOTE_VFN int3 operator-(int a, const int3& b) { int3 r; r.x = (int)(a - b.x); r.y = (int)(a - b.y); r.z = (int)(a - b.z); return r; }
__HIP_REMOTE_VFN int3& operator*=(int3& a, const int3& b) { a.x *= b.x; a.y *= b.y; a.z *= b.z; return a; }
__HIP_REMOTE_VFN int3& operator*=(int3& a, int b) { a.x *= b; a.y *= b; a.z *= b; return a; }
__HIP_REMOTE_VFN int3 operator*(int3 a, const int3& b) { return a *= b; }
__HIP_REMOTE_VFN int3 operator*(int3 a, int b) { return a *= b; }
__HIP_REMOTE_VFN int3 operator*(int a, const int3& b) { int3 r; r.x = (int)(a * b.x); r.y = (int)(a * b.y); r.z = (int)(a * b.z); return r; }
__HIP_REMOTE_VFN int3& operator/=(int3& a, const int3& b) { a.x /= b.x; a.y /= b.y; a.z /= b.z; return a; }
__HIP_REMOTE_VFN int3& operator/=(int3& a, int b) { a.x /= b; a.y /= b; a.z /= b; return a; }
__HIP_REMOTE_VFN int3 operator/(int3 a, const int3& b) { return a /= b; }
__HIP_REMOTE_VFN int3 operator/(int3 a, int b) { return a /= b; }
__HIP_REMOTE_VFN int3 operator/(int a, const int3& b) { int3 r; r.x = (int)(a / b.x); r.y = (int)(a / b.y); r.z = (int)(a / b.z); return r; }
__HIP_REMOTE_VFN int3& operator%=(int3& a, const int3& b) { a.x %= b.x; a.y %= b.y; a.z %= b.z; return a; }
__HIP_REMOTE_VFN int3& operator%=(int3& a, int b) { a.x %= b; a.y %= b; a.z %= b; return a; }
__HIP_REMOTE_VFN int3 operator%(int3 a, const int3& b) { return a %= b; }
__HIP_REMOTE_VFN int3 operator%(int3 a, int b) { return a %= b; }
__HIP_REMOTE_VFN int3 operator%(int a, const int3& b) { int3 r; r.x = (int)(a % b.x); r.y = (int)(a % b.y); r.z = (int)(a % b.z); return r; }
__HIP_REMOTE_VFN int3& operator&=(int3& a, const int3& b) { a.x &= b.x; a.y &= b.y; a.z &= b.z; return a; }
__HIP_REMOTE_VFN int3& operator&=(int3& a, int b) { a.x &= b; a.y &= b; a.z &= b; return a; }
__HIP_REMOTE_VFN int3 operator&(int3 a, const int3& b) { return a &= b; }
__HIP_REMOTE_VFN int3 operator&(int3 a, int b) { return a &= b; }
__HIP_REMOTE_VFN int3 operator&(int a, const int3& b) { int3 r; r.x = (int)(a & b.x); r.y = (int)(a & b.y); r.z = (int)(a & b.z); return r; }
__HIP_REMOTE_VFN int3& operator|=(int3& a, const int3& b) { a.x |= b.x; a.y |= b.y; a.z |= b.z; return a; }
__HIP_REMOTE_VFN int3& operator|=(int3& a, int b) { a.x |= b; a.y |= b; a.z |= b; return a; }
__HIP_REMOTE_VFN int3 operator|(int3 a, const int3& b) { return a |= b; }
__HIP_REMOTE_VFN int3 operator|(int3 a, int b) { return a |= b; }
__HIP_REMOTE_VFN int3 operator|(int a, const int3& b) { int3 r; r.x = (int)(a | b.x); r.y = (int)(a | b.y); r.z = (int)(a | b.z); return r; }
__HIP_REMOTE_VFN int3& operator^=(int3& a, const int3& b) { a.x ^= b.x; a.y ^= b.y; a.z ^= b.z; return a; }
__HIP_REMOTE_VFN int3& operator^=(int3& a, int b) { a.x ^= b; a.y ^= b; a.z ^= b; return a; }
__HIP_REMOTE_VFN int3 operator^(int3 a, const int3& b) { return a ^= b; }
__HIP_REMOTE_VFN int3 operator^(int3 a, int b) { return a ^= b; }
__HIP_REMOTE_VFN int3 operator^(int a, const int3& b) { int3 r; r.x = (int)(a ^ b.x); r.y = (int)(a ^ b.y); r.z = (int)(a ^ b.z); return r; }
__HIP_REMOTE_VFN int3& operator<<=(int3& a, const int3& b) { a.x <<= b.x; a.y <<= b.y; a.z <<= b.z; return a; }
__HIP_REMOTE_VFN int3& operator<<=(int3& a, int b) { a.x <<= b; a.y <<= b; a.z <<= b; return a; }
__HIP_REMOTE_VFN int3 operator<<(int3 a, const int3& b) { return a <<= b; }
__HIP_REMOTE_VFN int3 operator<<(int3 a, int b) { return a <<= b; }
__HIP_REMOTE_VFN int3 operator<<(int a, const int3& b) { int3 r; r.x = (int)(a << b.x); r.y = (int)(a << b.y); r.z = (int)(a << b.z); return r; }
__HIP_REMOTE_VFN int3& operator>>=(int3& a, const int3& b) { a.x >>= b.x; a.y >>= b.y; a.z >>= b.z; return a; }
__HIP_REMOTE_VFN int3& operator>>=(int3& a, int b) { a.x >>= b; a.y >>= b; a.z >>= b; return a; }
__HIP_REMOTE_VFN int3 operator>>(int3 a, const int3& b) { return a >>= b; }
__HIP_REMOTE_VFN int3 operator>>(int3 a, int b) { return a >>= b; }
__HIP_REMOTE_VFN int3 operator>>(int a, const int3& b) { int3 r; r.x = (int)(a >> b.x); r.y = (int)(a >> b.y); r.z = (int)(a >> b.z); return r; }
__HIP_REMOTE_VFN int3 operator-(const int3& a) { int3 r; r.x = (int)-a.x; r.y = (int)-a.y; r.z = (int)-a.z; return r; }
__HIP_REMOTE_VFN int3 operator+(const int3& a) { return a; }
__HIP_REMOTE_VFN int3 operator~(const int3& a) { int3 r; r.x = (int)~a.x; r.y = (int)~a.y; r.z = (int)~a.z; return r; }
__HIP_REMOTE_VFN bool operator==(const int3& a, const int3& b) { return a.x == b.x && a.y == b.y && a.z == b.z; }
__HIP_REMOTE_VFN bool operator!=(const int3& a, const int3& b) { return !(a == b); }
/* int4 */
__HIP_REMOTE_VFN int4& operator+=(int4& a, const int4& b) { a.x += b.x; a.y += b.y; a.z += b.z; a.w += b.w; return a; }
__HIP_REMOTE_VFN int4& operator+=(int4& a, int b) { a.x += b; a.y += b; a.z += b; a.w += b; return a; }
__HIP_REMOTE_VFN int4 operator+(int4 a, const int4& b) { return a += b; }
__HIP_REMOTE_VFN int4 operator+(int4 a, int b) { return a += b; }
__HIP_REMOTE_VFN int4 operator+(int a, const int4& b) { int4 r; r.x = (int)(a + b.x); r.y = (int)(a + b.y); r.z = (int)(a + b.z); r.w = (int)(a + b.w); return r; }
__HIP_REMOTE_VFN int4& operator-=(int4& a, const int4& b) { a.x -= b.x; a.y -= b.y; a.z -= b.z; a.w -= b.w; return a; }
__HIP_REMOTE_VFN int4& operator-=(int4& a, int b) { a.x -= b; a.y -= b; a.z -= b; a.w -= b; return a; }
__HIP_REMOTE_VFN int4 operator-(int4 a, const int4& b) { return a -= b; }
__HIP_REMOTE_VFN int4 operator-(int4 a, int b) { return a -= b; }
__HIP_REMOTE_VFN int4 operator-(int a, const int4& b) { int4 r; r.x = (int)(a - b.x); r.y = (int)(a - b.y); r.z = (int)(a - b.z); r.w = (int)(a - b.w); return r; }
__HIP_REMOTE_VFN int4& operator*=(int4& a, const int4& b) { a.x *= b.x; a.y *= b.y; a.z *= b.z; a.w *= b.w; return a; }
__HIP_REMOTE_VFN int4& operator*=(int4& a, int b) { a.x *= b; a.y *= b; a.z *= b; a.w *= b; return a; }
__HIP_REMOTE_VFN int4 operator*(int4 a, const int4& b) { return a *= b; }
__HIP_REMOTE_VFN int4 operator*(int4 a, int b) { return a *= b; }
__HIP_REMOTE_VFN int4 operator*(int a, const int4& b) { int4 r; r.x = (int)(a * b.x); r.y = (int)(a * b.y); r.z = (int)(a * b.z); r.w = (int)(a * b.w); return r; }
__HIP_REMOTE_VFN int4& operator/=(int4& a, const int4& b) { a.x /= b.x; a.y /= b.y; a.z /= b.z; a.w /= b.w; return a; }
__HIP_REMOTE_VFN int4& operator/=(int4& a, int b) { a.x /= b; a.y /= b; a.z /= b; a.w /= b; return a; }
__HIP_REMOTE_VFN int4 operator/(int4 a, const int4& b) { return a /= b; }
__HIP_REMOTE_VFN int4 operator/(int4 a, int b) { return a /= b; }
__HIP_REMOTE_VFN int4 operator/(int a, const int4& b) { int4 r; r.x = (int)(a / b.x); r.y = (int)(a / b.y); r.z = (int)(a / b.z); r.w = (int)(a / b.w); return r; }
__HIP_REMOTE_VFN int4& operator%=(int4& a, const int4& b) { a.x %= b.x; a.y %= b.y; a.z %= b.z; a.w %= b.w; return a; }
__HIP_REMOTE_VFN int4& operator%=(int4& a, int b) { a.x %= b; a.y %= b; a.z %= b; a.w %= b; return a; }
__HIP_REMOTE_VFN int4 operator%(int4 a, const int4& b) { return a %= b; }
__HIP_REMOTE_VFN int4 operator%(int4 a, int b) { return a %= b; }
__HIP_REMOTE_VFN int4 operator%(int a, const int4& b) { int4 r; r.x = (int)(a % b.x); r.y = (int)(a % b.y); r.z = (int)(a % b.z); r.w = (int)(a % b.w); return r; }
__HIP_REMOTE_VFN int4& operator&=(int4& a, const int4& b) { a.x &= b.x; a.y &= b.y; a.z &= b.z; a.w &= b.w; return a; }
__HIP_REMOTE_VFN int4& operator&=(int4& a, int b) { a.x &= b; a.y &= b; a.z &= b; a.w &= b; return a; }
__HIP_REMOTE_VFN int4 operator&(int4 a, const int4& b) { return a &= b; }
__HIP_REMOTE_VFN int4 operator&(int4 a, int b) { return a &= b; }
__HIP_REMOTE_VFN int4 operator&(int a, const int4& b) { int4 r; r.x = (int)(a & b.x); r.y = (int)(a & b.y); r.z = (int)(a & b.z); r.w = (int)(a & b.w); return r; }
__HIP_REMOTE_VFN int4& operator|=(int4& a, const int4& b) { a.x |= b.x; a.y |= b.y; a.z |= b.z; a.w |= b.w; return a; }
__HIP_REMOTE_VFN int4& operator|=(int4& a, int b) { a.x |= b; a.y |= b; a.z |= b; a.w |= b; return a; }
__HIP_REMOTE_VFN int4 operator|(int4 a, const int4& b) { return a |= b; }
__HIP_REMOTE_VFN int4 operator|(int4 a, int b) { return a |= b; }
__HIP_REMOTE_VFN int4 operator|(int a, const int4& b) { int4 r; r.x = (int)(a | b.x); r.y = (int)(a | b.y); r.z = (int)(a | b.z); r.w = (int)(a | b.w); return r; }
__HIP_REMOTE_VFN int4& operator^=(int4& a, const int4& b) { a.x ^= b.x; a.y ^= b.y; a.z ^= b.z; a.w ^= b.w; return a; }
__HIP_REMOTE_VFN int4& operator^=(int4& a, int b) { a.x ^= b; a.y ^= b; a.z ^= b; a.w ^= b; return a; }
__HIP_REMOTE_VFN int4 operator^(int4 a, const int4& b) { return a ^= b; }
__HIP_REMOTE_VFN int4 operator^(int4 a, int b) { return a ^= b; }
__HIP_REMOTE_VFN int4 operator^(int a, const int4& b) { int4 r; r.x = (int)(a ^ b.x); r.y = (int)(a ^ b.y); r.z = (int)(a ^ b.z); r.w = (int)(a ^ b.w); return r; }
__HIP_REMOTE_VFN int4& operator<<=(int4& a, const int4& b) { a.x <<= b.x; a.y <<= b.y; a.z <<= b.z; a.w <<= b.w; return a; }
__HIP_REMOTE_VFN int4& operator<<=(int4& a, int b) { a.x <<= b; a.y <<= b; a.z <<= b; a.w <<= b; return a; }
__HIP_REMOTE_VFN int4 operator<<(int4 a, const int4& b) { return a <<= b; }
__HIP_REMOTE_VFN int4 operator<<(int4 a, int b) { return a <<= b; }
__HIP_REMOTE_VFN int4 operator<<(int a, const int4& b) { int4 r; r.x = (int)(a << b.x); r.y = (int)(a << b.y); r.z = (int)(a << b.z); r.w = (int)(a << b.w); return r; }
__HIP_REMOTE_VFN int4& operator>>=(int4& a, const int4& b) { a.x >>= b.x; a.y >>= b.y; a.z >>= b.z; a.w >>= b.w; return a; }
__HIP_REMOTE_VFN int4& operator>>=(int4& a, int b) { a.x >>= b; a.y >>= b; a.z >>= b; a.w >>= b; return a; }
__HIP_REMOTE_VFN int4 operator>>(int4 a, const int4& b) { return a >>= b; }
__HIP_REMOTE_VFN int4 operator>>(int4 a, int b) { return a >>= b; }
__HIP_REMOTE_VFN int4 operator>>(int a, const int4& b) { int4 r; r.x = (int)(a >> b.x); r.y = (int)(a >> b.y); r.z = (int)(a >> b.z); r.w = (int)(a >> b.w); return r; }
__HIP_REMOTE_VFN int4 operator-(const int4& a) { int4 r; r.x = (int)-a.x; r.y = (int)-a.y; r.z = (int)-a.z; r.w = (int)-a.w; return r; }
__HIP_REMOTE_VFN int4 operator+(const int4& a) { return a; }
__HIP_REMOTE_VFN int4 operator~(const int4& a) { int4 r; r.x = (int)~a.x; r.y = (int)~a.y; r.z = (int)~a.z; r.w = (int)~a.w; return r; }
__HIP_REMOTE_VFN bool operator==(const int4& a, const int4& b) { return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w; }
__HIP_REMOTE_VFN bool operator!=(const int4& a, const int4& b) { return !(a == b); }
/* uint1 */
__HIP_REMOTE_VFN uint1& operator+=(uint1& a, const uint1& b) { a.x += b.x; return a; }
__HIP_REMOTE_VFN uint1& operator+=(uint1& a, unsigned int b) { a.x += b; return a; }
__HIP_REMOTE_VFN uint1 operator+(uint1 a, const uint1& b) { return a += b; }
__HIP_REMOTE_VFN uint1 operator+(uint1 a, unsigned int b) { return a += b; }
__HIP_REMOTE_VFN uint1 operator+(unsigned int a, const uint1& b) { uint1 r; r.x = (unsigned int)(a + b.x); return r; }
__HIP_REMOTE_VFN uint1& operator-=(uint1& a, const uint1& b) { a.x -= b.x; return a; }
__HIP_REMOTE_VFN uint1& operator-=(uint1& a, unsigned int b) { a.x -= b; return a; }
__HIP_REMOTE_VFN uint1 operator-(uint1 a, const uint1& b) { return a -= b; }
__HIP_REMOTE_VFN uint1 operator-(uint1 a, unsigned int b) { return a -= b; }
__HIP_REMOTE_VFN uint1 operator-(unsigned int a, const uint1& b) { uint1 r; r.x = (unsigned int)(a - b.x); return r; }
__HIP_REMOTE_VFN uint1& operator*=(uint1& a, const uint1& b) { a.x *= b.x; return a; }
__HIP_REMOTE_VFN uint1& operator*=(uint1& a, unsigned int b) { a.x *= b; return a; }
__HIP_REMOTE_VFN uint1 operator*(uint1 a, const uint1& b) { return a *= b; }
__HIP_REMOTE_VFN uint1 operator*(uint1 a, unsigned int b) { return a *= b; }
__HIP_REMOTE_VFN uint1 operator*(unsigned int a, const uint1& b) { uint1 r; r.x = (unsigned int)(a * b.x); return r; }
__HIP_REMOTE_VFN uint1& operator/=(uint1& a, const uint1& b) { a.x /= b.x; return a; }
__HIP_REMOTE_VFN uint1& operator/=(uint1& a, unsigned int b) { a.x /= b; return a; }
__HIP_REMOTE_VFN uint1 operator/(uint1 a, const uint1& b) { return a /= b; }
__HIP_REMOTE_VFN uint1 operator/(uint1 a, unsigned int b) { return a /= b; }
__HIP_REMOTE_VFN uint1 operator/(unsigned int a, const uint1& b) { uint1 r; r.x = (unsigned int)(a / b.x); return r; }
__HIP_REMOTE_VFN uint1& operator%=(uint1& a, const uint1& b) { a.x %= b.x; return a; }
__HIP_REMOTE_VFN uint1& operator%=(uint1& a, unsigned int b) { a.x %= b; return a; }
__HIP_REMOTE_VFN uint1 operator%(uint1 a, const uint1& b) { return a %= b; }
__HIP_REMOTE_VFN uint1 operator%(uint1 a, unsigned int b) { return a %= b; }
__HIP_REMOTE_VFN uint1 operator%(unsigned int a, const uint1& b) { uint1 r; r.x = (unsigned int)(a % b.x); return r; }
__HIP_REMOTE_VFN uint1& operator&=(uint1& a, const uint1& b) { a.x &= b.x; return a; }
__HIP_REMOTE_VFN uint1& operator&=(uint1& a, unsigned int b) { a.x &= b; return a; }
__HIP_REMOTE_VFN uint1 operator&(uint1 a, const uint1& b) { return a &= b; }
__HIP_REMOTE_VFN uint1 operator&(uint1 a, unsigned int b) { return a &= b; }
__HIP_REMOTE_VFN uint1 operator&(unsigned int a, const uint1& b) { uint1 r; r.x = (unsigned int)(a & b.x); return r; }
__HIP_REMOTE_VFN uint1& operator|=(uint1& a, const uint1& b) { a.x |= b.x; return a; }
__HIP_REMOTE_VFN uint1& operator|=(uint1& a, unsigned int b) { a.x |= b; return a; }
__HIP_REMOTE_VFN uint1 operator|(uint1 a, const uint1& b) { return a |= b; }
__HIP_REMOTE_VFN uint1 operator|(uint1 a, unsigned int b) { return a |= b; }
__HIP_REMOTE_VFN uint1 operator|(unsigned int a, const uint1& b) { uint1 r; r.x = (unsigned int)(a | b.x); return r; }
__HIP_REMOTE_VFN uint1& operator^=(uint1& a, const uint1& b) { a.x ^= b.x; return a; }
__HIP_REMOTE_VFN uint1& operator^=(uint1& a, unsigned int b) { a.x ^= b; return a; }
__HIP_REMOTE_VFN uint1 operator^(uint1 a, const uint1& b) { return a ^= b; }
__HIP_REMOTE_VFN uint1 operator^(uint1 a, unsigned int b) { return a ^= b; }
__HIP_REMOTE_VFN uint1 operator^(unsigned int a, const uint1& b) { uint1 r; r.x = (unsigned int)(a ^ b.x); return r; }
__HIP_REMOTE_VFN uint1& operator<<=(uint1& a, const uint1& b) { a.x <<= b.x; return a; }
__HIP_REMOTE_VFN uint1& operator<<=(uint1& a, unsigned int b) { a.x <<= b; return a; }
__HIP_REMOTE_VFN uint1 operator<<(uint1 a, const uint1& b) { return a <<= b; }
__HIP_REMOTE_VFN uint1 operator<<(uint1 a, unsigned int b) { return a <<= b; }
__HIP_REMOTE_VFN uint1 operator<<(unsigned int a, const uint1& b) { uint1 r; r.x = (unsigned int)(a << b.x); return r; }
__HIP_REMOTE_VFN uint1& operator>>=(uint1& a, const uint1& b) { a.x >>= b.x; return a; }
__HIP_REMOTE_VFN uint1& operator>>=(uint1& a, unsigned int b) { a.x >>= b; return a; }
__HIP_REMOTE_VFN uint1 operator>>(uint1 a, const uint1& b) { return a >>= b; }
__HIP_REMOTE_VFN uint1 operator>>(uint1 a, unsigned int b) { return a >>= b; }
__HIP_REMOTE_VFN uint1 operator>>(unsigned int a, const uint1& b) { uint1 r; r.x = (unsigned int)(a >> b.x); return r; }
__HIP_REMOTE_VFN uint1 operator-(const uint1& a) { uint1 r; r.x = (unsigned int)-a.x; return r; }
__HIP_REMOTE_VFN uint1 operator+(const uint1& a) { return a; }
__HIP_REMOTE_VFN uint1 operator~(const uint1& a) { uint1 r; r.x = (unsigned int)~a.x; return r; }
__HIP_REMOTE_VFN bool operator==(const uint1& a, const uint1& b) { return a.x == b.x; }
__HIP_REMOTE_VFN bool operator!=(const uint1& a, const uint1& b) { return !(a == b); }
/* uint2 */
__HIP_REMOTE_VFN uint2& operator+=(uint2& a, const uint2& b) { a.x += b.x; a.y += b.y; return a; }
__HIP_REMOTE_VFN uint2& operator+=(uint2& a, unsigned int b) { a.x += b; a.y += b; return a; }
__HIP_REMOTE_VFN uint2 operator+(uint2 a, const uint2& b) { return a += b; }
__HIP_REMOTE_VFN uint2 operator+(uint2 a, unsigned int b) { return a += b; }
__HIP_REMOTE_VFN uint2 operator+(unsigned int a, const uint2& b) { uint2 r; r.x = (unsigned int)(a + b.x); r.y = (unsigned int)(a + b.y); return r; }
__HIP_REMOTE_VFN uint2& operator-=(uint2& a, const uint2& b) { a.x -= b.x; a.y -= b.y; return a; }
__HIP_REMOTE_VFN uint2& operator-=(uint2& a, unsigned int b) { a.x -= b; a.y -= b; return a; }
__HIP_REMOTE_VFN uint2 operator-(uint2 a, const uint2& b) { return a -= b; }
__HIP_REMOTE_VFN uint2 operator-(uint2 a, unsigned int b) { return a -= b; }
__HIP_REMOTE_VFN uint2 operator-(unsigned int a, const uint2& b) { uint2 r; r.x = (unsigned int)(a - b.x); r.y = (unsigned int)(a - b.y); return r; }
__HIP_REMOTE_VFN uint2& operator*=(uint2& a, const uint2& b) { a.x *= b.x; a.y *= b.y; return a; }
__HIP_REMOTE_VFN uint2& operator*=(uint2& a, unsigned int b) { a.x *= b; a.y *= b; return a; }
__HIP_REMOTE_VFN uint2 operator*(uint2 a, const uint2& b) { return a *= b; }
__HIP_REMOTE_VFN uint2 operator*(uint2 a, unsigned int b) { return a *= b; }
__HIP_REMOTE_VFN uint2 operator*(unsigned int a, const uint2& b) { uint2 r; r.x = (unsigned int)(a * b.x); r.y = (unsigned int)(a * b.y); return r; }
__HIP_REMOTE_VFN uint2& operator/=(uint2& a, const uint2& b) { a.x /= b.x; a.y /= b.y; return a; }
__HIP_REMOTE_VFN uint2& operator/=(uint2& a, unsigned int b) { a.x /= b; a.y /= b; return a; }
__HIP_REMOTE_VFN uint2 operator/(uint2 a, const uint2& b) { return a /= b; }
__HIP_REMOTE_VFN uint2 operator/(uint2 a, unsigned int b) { return a /= b; }
__HIP_REMOTE_VFN uint2 operator/(unsigned int a, const uint2& b) { uint2 r; r.x = (unsigned int)(a / b.x); r.y = (unsigned int)(a / b.y); return r; }
__HIP_REMOTE_VFN uint2& operator%=(uint2& a, const uint2& b) { a.x %= b.x; a.y %= b.y; return a; }
__HIP_REMOTE_VFN uint2& operator%=(uint2& a, unsigned int b) { a.x %= b; a.y %= b; return a; }
__HIP_REMOTE_VFN uint2 operator%(uint2 a, const uint2& b) { return a %= b; }
__HIP_REMOTE_VFN uint2 operator%(uint2 a, unsigned int b) { return a %= b; }
__HIP_REMOTE_VFN uint2 operator%(unsigned int a, const uint2& b) { uint2 r; r.x = (unsigned int)(a % b.x); r.y = (unsigned int)(a % b.y); return r; }
__HIP_REMOTE_VFN uint2& operator&=(uint2& a, const uint2& b) { a.x &= b.x; a.y &= b.y; return a; }
__HIP_REMOTE_VFN uint2& operator&=(uint2& a, unsigned int b) { a.x &= b; a.y &= b; return a; }
__HIP_REMOTE_VFN uint2 operator&(uint2 a, const uint2& b) { return a &= b; }
__HIP_REMOTE_VFN uint2 operator&(uint2 a, unsigned int b) { return a &= b; }
__HIP_REMOTE_VFN uint2 operator&(unsigned int a, const uint2& b) { uint2 r; r.x = (unsigned int)(a & b.x); r.y = (unsigned int)(a & b.y); return r; }
__HIP_REMOTE_VFN uint2& operator|=(uint2& a, const uint2& b) { a.x |= b.x; a.y |= b.y; return a; }
__HIP_REMOTE_VFN uint2& operator|=(uint2& a, unsigned int b) { a.x |= b; a.y |= b; return a; }
__HIP_REMOTE_VFN uint2 operator|(uint2 a, const uint2& b) { return a |= b; }
__HIP_REMOTE_VFN uint2 operator|(uint2 a, unsigned int b) { return a |= b; }
__HIP_REMOTE_VFN uint2 operator|(unsigned int a, const uint2& b) { uint2 r; r.x = (unsigned int)(a | b.x); r.y = (unsigned int)(a | b.y); return r; }
__HIP_REMOTE_VFN uint2& operator^=(uint2& a, const uint2& b) { a.x ^= b.x; a.y ^= b.y; return a; }
__HIP_REMOTE_VFN uint2& operator^=(uint2& a, unsigned int b) { a.x ^= b; a.y ^= b; return a; }
__HIP_REMOTE_VFN uint2 operator^(uint2 a, const uint2& b) { return a ^= b; }
__HIP_REMOTE_VFN uint2 operator^(uint2 a, unsigned int b) { return a ^= b; }
__HIP_REMOTE_VFN uint2 operator^(unsigned int a, const uint2& b) { uint2 r; r.x = (unsigned int)(a ^ b.x); r.y = (unsigned int)(a ^ b.y); return r; }
__HIP_REMOTE_VFN uint2& operator<<=(uint2& a, const uint2& b) { a.x <<= b.x; a.y <<= b.y; return a; }
__HIP_REMOTE_VFN uint2& operator<<=(uint2& a, unsigned int b) { a.x <<= b; a.y <<= b; return a; }
__HIP_REMOTE_VFN uint2 operator<<(uint2 a, const uint2& b) { return a <<= b; }
__HIP_REMOTE_VFN uint2 operator<<(uint2 a, unsigned int b) { return a <<= b; }
__HIP_REMOTE_VFN uint2 operator<<(unsigned int a, const uint2& b) { uint2 r; r.x = (unsigned int)(a << b.x); r.y = (unsigned int)(a << b.y); return r; }
__HIP_REMOTE_VFN uint2& operator>>=(uint2& a, const uint2& b) { a.x >>= b.x; a.y >>= b.y; return a; }
__HIP_REMOTE_VFN uint2& operator>>=(uint2& a, unsigned int b) { a.x >>= b; a.y >>= b; return a; }
__HIP_REMOTE_VFN uint2 operator>>(uint2 a, const uint2& b) { return a >>= b; }
__HIP_REMOTE_VFN uint2 operator>>(uint2 a, unsigned int b) { return a >>= b; }
__HIP_REMOTE_VFN uint2 operator>>(unsigned int a, const uint2& b) { uint2 r; r.x = (unsigned int)(a >> b.x); r.y = (unsigned int)(a >> b.y); return r; }
__HIP_REMOTE_VFN uint2 operator-(const uint2& a) { uint2 r; r.x = (unsigned int)-a.x; r.y = (unsigned int)-a.y; return r; }
__HIP_REMOTE_VFN uint2 operator+(const uint2& a) { return a; }
__HIP_REMOTE_VFN uint2 operator~(const uint2& a) { uint2 r; r.x = (unsigned int)~a.x; r.y = (unsigned int)~a.y; return r; }
__HIP_REMOTE_VFN bool operator==(const uint2& a, const uint2& b) { return a.x == b.x && a.y == b.y; }
__HIP_REMOTE_VFN bool operator!=(const uint2& a, const uint2& b) { return !(a == b); }
/* uint3 */
__HIP_REMOTE_VFN uint3& operator+=(uint3& a, const uint3& b) { a.x += b.x; a.y += b.y; a.z += b.z; return a; }
__HIP_REMOTE_VFN uint3& operator+=(uint3& a, unsigned int b) { a.x += b; a.y += b; a.z += b; return a; }
__HIP_REMOTE_VFN uint3 operator+(uint3 a, const uint3& b) { return a += b; }
__HIP_REMOTE_VFN uint3 operator+(uint3 a, unsigned int b) { return a += b; }
__HIP_REMOTE_VFN uint3 operator+(unsigned int a, const uint3& b) { uint3 r; r.x = (unsigned int)(a + b.x); r.y = (unsigned int)(a + b.y); r.z = (unsigned int)(a + b.z); return r; }
__HIP_REMOTE_VFN uint3& operator-=(uint3& a, const uint3& b) { a.x -= b.x; a.y -= b.y; a.z -= b.z; return a; }
__HIP_REMOTE_VFN uint3& operator-=(uint3& a, unsigned int b) { a.x -= b; a.y -= b; a.z -= b; return a; }
__HIP_REMOTE_VFN uint3 operator-(uint3 a, const uint3& b) { return a -= b; }
__HIP_REMOTE_VFN uint3 operator-(uint3 a, unsigned int b) { return a -= b; }
__HIP_REMOTE_VFN uint3 operator-(unsigned int a, const uint3& b) { uint3 r; r.x = (unsigned int)(a - b.x); r.y = (unsigned int)(a - b.y); r.z = (unsigned int)(a - b.z); return r; }
__HIP_REMOTE_VFN uint3& operator*=(uint3& a, const uint3& b) { a.x *= b.x; a.y *= b.y; a.z *= b.z; return a; }
__HIP_REMOTE_VFN uint3& operator*=(uint3& a, unsigned int b) { a.x *= b; a.y *= b; a.z *= b; return a; }
__HIP_REMOTE_VFN uint3 operator*(uint3 a, const uint3& b) { return a *= b; }
__HIP_REMOTE_VFN uint3 operator*(uint3 a, unsigned int b) { return a *= b; }
__HIP_REMOTE_VFN uint3 operator*(unsigned int a, const uint3& b) { uint3 r; r.x = (unsigned int)(a * b.x); r.y = (unsigned int)(a * b.y); r.z = (unsigned int)(a * b.z); return r; }
__HIP_REMOTE_VFN uint3& operator/=(uint3& a, const uint3& b) { a.x /= b.x; a.y /= b.y; a.z /= b.z; return a; }
__HIP_REMOTE_VFN uint3& operator/=(uint3& a, unsigned int b) { a.x /= b; a.y /= b; a.z /= b; return a; }
__HIP_REMOTE_VFN uint3 operator/(uint3 a, const uint3& b) { return a /= b; }
__HIP_REMOTE_VFN uint3 operator/(uint3 a, unsigned int b) { return a /= b; }
__HIP_REMOTE_VFN uint3 operator/(unsigned int a, const uint3& b) { uint3 r; r.x = (unsigned int)(a / b.x); r.y = (unsigned int)(a / b.y); r.z = (unsigned int)(a / b.z); return r; }
__HIP_REMOTE_VFN uint3& operator%=(uint3& a, const uint3& b) { a.x %= b.x; a.y %= b.y; a.z %= b.z; return a; }
__HIP_REMOTE_VFN uint3& operator%=(uint3& a, unsigned int b) { a.x %= b; a.y %= b; a.z %= b; return a; }
__HIP_REMOTE_VFN uint3 operator%(uint3 a, const uint3& b) { return a %= b; }
__HIP_REMOTE_VFN uint3 operator%(uint3 a, unsigned int b) { return a %= b; }
__HIP_REMOTE_VFN uint3 operator%(unsigned int a, const uint3& b) { uint3 r; r.x = (unsigned int)(a % b.x); r.y = (unsigned int)(a % b.y); r.z = (unsigned int)(a % b.z); return r; }
__HIP_REMOTE_VFN uint3& operator&=(uint3& a, const uint3& b) { a.x &= b.x; a.y &= b.y; a.z &= b.z; return a; }
__HIP_REMOTE_VFN uint3& operator&=(uint3& a, unsigned int b) { a.x &= b; a.y &= b; a.z &= b; return a; }
__HIP_REMOTE_VFN uint3 operator&(uint3 a, const uint3& b) { return a &= b; }
__HIP_REMOTE_VFN uint3 operator&(uint3 a, unsigned int b) { return a &= b; }
__HIP_REMOTE_VFN uint3 operator&(unsigned int a, const uint3& b) { uint3 r; r.x = (unsigned int)(a & b.x); r.y = (unsigned int)(a & b.y); r.z = (unsigned int)(a & b.z); return r; }
__HIP_REMOTE_VFN uint3& operator|=(uint3& a, const uint3& b) { a.x |= b.x; a.y |= b.y; a.z |= b.z; return a; }
__HIP_REMOTE_VFN uint3& operator|=(uint3& a, unsigned int b) { a.x |= b; a.y |= b; a.z |= b; return a; }
__HIP_REMOTE_VFN uint3 operator|(uint3 a, const uint3& b) { return a |= b; }
__HIP_REMOTE_VFN uint3 operator|(uint3 a, unsigned int b) { return a |= b; }
__HIP_REMOTE_VFN uint3 operator|(unsigned int a, const uint3& b) { uint3 r; r.x = (unsigned int)(a | b.x); r.y = (unsigned int)(a | b.y); r.z = (unsigned int)(a | b.z); return r; }
__HIP_REMOTE_VFN uint3& operator^=(uint3& a, const uint3& b) { a.x ^= b.x; a.y ^= b.y; a.z ^= b.z; return a; }
__HIP_REMOTE_VFN uint3& operator^=(uint3& a, unsigned int b) { a.x ^= b; a.y ^= b; a.z ^= b; return a; }
__HIP_REMOTE_VFN uint3 operator^(uint3 a, const uint3& b) { return a ^= b; }
__HIP_REMOTE_VFN uint3 operator^(uint3 a, unsigned int b) { return a ^= b; }
__HIP_REMOTE_VFN uint3 operator^(unsigned int a, const uint3& b) { uint3 r; r.x = (unsigned int)(a ^ b.x); r.y = (unsigned int)(a ^ b.y); r.z = (unsigned int)(a ^ b.z); return r; }
__HIP_REMOTE_VFN uint3& operator<<=(uint3& a, const uint3& b) { a.x <<= b.x; a.y <<= b.y; a.z <<= b.z; return a; }
__HIP_REMOTE_VFN uint3& operator<<=(uint3& a, unsigned int b) { a.x <<= b; a.y <<= b; a.z <<= b; return a; }
__HIP_REMOTE_VFN uint3 operator<<(uint3 a, const uint3& b) { return a <<= b; }
__HIP_REMOTE_VFN uint3 operator<<(uint3 a, unsigned int b) { return a <<= b; }
__HIP_REMOTE_VFN uint3 operator<<(unsigned int a, const uint3& b) { uint3 r; r.x = (unsigned int)(a << b.x); r.y = (unsigned int)(a << b.y); r.z = (unsigned int)(a << b.z); return r; }
__HIP_REMOTE_VFN uint3& operator>>=(uint3& a, const uint3& b) { a.x >>= b.x; a.y >>= b.y; a.z >>= b.z; return a; }
__HIP_REMOTE_VFN uint3& operator>>=(uint3& a, unsigned int b) { a.x >>= b; a.y >>= b; a.z >>= b; return a; }
__HIP_REMOTE_VFN uint3 operator>>(uint3 a, const uint3& b) { return a >>= b; }
__HIP_REMOTE_VFN uint3 operator>>(uint3 a, unsigned int b) { return a >>= b; }
__HIP_REMOTE_VFN uint3 operator>>(unsigned int a, const uint3& b) { uint3 r; r.x = (unsigned int)(a >> b.x); r.y = (unsigned int)(a >> b.y); r.z = (unsigned int)(a >> b.z); return r; }
__HIP_REMOTE_VFN uint3 operator-(const uint3& a) { uint3 r; r.x = (unsigned int)-a.x; r.y = (unsigned int)-a.y; r.z = (unsigned int)-a.z; return r; }
__HIP_REMOTE_VFN uint3 operator+(const uint3& a) { return a; }
__HIP_REMOTE_VFN uint3 operator~(const uint3& a) { uint3 r; r.x = (unsigned int)~a.x; r.y = (unsigned int)~a.y; r.z = (unsigned int)~a.z; return r; }
__HIP_REMOTE_VFN bool operator==(const uint3& a, const uint3& b) { return a.x == b.x && a.y == b.y && a.z == b.z; }
__HIP_REMOTE_VFN bool operator!=(const uint3& a, const uint3& b) { return !(a == b); }
/* uint4 */
__HIP_REMOTE_VFN uint4& operator+=(uint4& a, const uint4& b) { a.x += b.x; a.y += b.y; a.z += b.z; a.w += b.w; return a; }
__HIP_REMOTE_VFN uint4& operator+=(uint4& a, unsigned int b) { a.x += b; a.y += b; a.z += b; a.w += b; return a; }
__HIP_REMOTE_VFN uint4 operator+(uint4 a, const uint4& b) { return a += b; }
__HIP_REMOTE_VFN uint4 operator+(uint4 a, unsigned int b) { return a += b; }
__HIP_REMOTE_VFN uint4 operator+(unsigned int a, const uint4& b) { uint4 r; r.x = (unsigned int)(a + b.x); r.y = (unsigned int)(a + b.y); r.z = (unsigned int)(a + b.z); r.w = (unsigned int)(a + b.w); return r; }
__HIP_REMOTE_VFN uint4& operator-=(uint4& a, const uint4& b) { a.x -= b.x; a.y -= b.y; a.z -= b.z; a.w -= b.w; return a; }
__HIP_REMOTE_VFN uint4& operator-=(uint4& a, unsigned int b) { a.x -= b; a.y -= b; a.z -= b; a.w -= b; return a; }
__HIP_REMOTE_VFN uint4 operator-(uint4 a, const uint4& b) { return a -= b; }
__HIP_REMOTE_VFN uint4 operator-(uint4 a, unsigned int b) { return a -= b; }
__HIP_REMOTE_VFN uint4 operator-(unsigned int a, const uint4& b) { uint4 r; r.x = (unsigned int)(a - b.x); r.y = (unsigned int)(a - b.y); r.z = (unsigned int)(a - b.z); r.w = (unsigned int)(a - b.w); return r; }
__HIP_REMOTE_VFN uint4& operator*=(uint4& a, const uint4& b) { a.x *= b.x; a.y *= b.y; a.z *= b.z; a.w *= b.w; return a; }
__HIP_REMOTE_VFN uint4& operator*=(uint4& a, unsigned int b) { a.x *= b; a.y *= b; a.z *= b; a.w *= b; return a; }
__HIP_REMOTE_VFN uint4 operator*(uint4 a, const uint4& b) { return a *= b; }
__HIP_REMOTE_VFN uint4 operator*(uint4 a, unsigned int b) { return a *= b; }
__HIP_REMOTE_VFN uint4 operator*(unsigned int a, const uint4& b) { uint4 r; r.x = (unsigned int)(a * b.x); r.y = (unsigned int)(a * b.y); r.z = (unsigned int)(a * b.z); r.w = (unsigned int)(a * b.w); return r; }
__HIP_REMOTE_VFN uint4& operator/=(uint4& a, const uint4& b) { a.x /= b.x; a.y /= b.y; a.z /= b.z; a.w /= b.w; return a; }
__HIP_REMOTE_VFN uint4& operator/=(uint4& a, unsigned int b) { a.x /= b; a.y /= b; a.z /= b; a.w /= b; return a; }
__HIP_REMOTE_VFN uint4 operator/(uint4 a, const uint4& b) { return a /= b; }
__HIP_REMOTE_VFN uint4 operator/(uint4 a, unsigned int b) { return a /= b; }
__HIP_REMOTE_VFN uint4 operator/(unsigned int a, const uint4& b) { uint4 r; r.x = (unsigned int)(a / b.x); r.y = (unsigned int)(a / b.y); r.z = (unsigned int)(a / b.z); r.w = (unsigned int)(a / b.w); return r; }
__HIP_REMOTE_VFN uint4& operator%=(uint4& a, const uint4& b) { a.x %= b.x; a.y %= b.y; a.z %= b.z; a.w %= b.w; return a; }
__HIP_REMOTE_VFN uint4& operator%=(uint4& a, unsigned int b) { a.x %= b; a.y %= b; a.z %= b; a.w %= b; return a; }
__HIP_REMOTE_VFN uint4 operator%(uint4 a, const uint4& b) { return a %= b; }
__HIP_REMOTE_VFN uint4 operator%(uint4 a, unsigned int b) { return a %= b; }
__HIP_REMOTE_VFN uint4 operator%(unsigned int a, const uint4& b) { uint4 r; r.x = (unsigned int)(a % b.x); r.y = (unsigned int)(a % b.y); r.z = (unsigned int)(a % b.z); r.w = (unsigned int)(a % b.w); return r; }
__HIP_REMOTE_VFN uint4& operator&=(uint4& a, const uint4& b) { a.x &= b.x; a.y &= b.y; a.z &= b.z; a.w &= b.w; return a; }
__HIP_REMOTE_VFN uint4& operator&=(uint4& a, unsigned int b) { a.x &= b; a.y &= b; a.z &= b; a.w &= b; return a; }
__HIP_REMOTE_VFN uint4 operator&(uint4 a, const uint4& b) { return a &= b; }
__HIP_REMOTE_VFN uint4 operator&(uint4 a, unsigned int b) { return a &= b; }
__HIP_REMOTE_VFN uint4 operator&(unsigned int a, const uint4& b) { uint4 r; r.x = (unsigned int)(a & b.x); r.y = (unsigned int)(a & b.y); r.z = (unsigned int)(a & b.z); r.w = (unsigned int)(a & b.w); return r; }
__HIP_REMOTE_VFN uint4& operator|=(uint4& a, const uint4& b) { a.x |= b.x; a.y |= b.y; a.z |= b.z; a.w |= b.w; return a; }
__HIP_REMOTE_VFN uint4& operator|=(uint4& a, unsigned int b) { a.x |= b; a.y |= b; a.z |= b; a.w |= b; return a; }
__HIP_REMOTE_VFN uint4 operator|(uint4 a, const uint4& b) { return a |= b; }
__HIP_REMOTE_VFN uint4 operator|(uint4 a, unsigned int b) { return a |= b; }
__HIP_REMOTE_VFN uint4 operator|(unsigned int a, const uint4& b) { uint4 r; r.x = (unsigned int)(a | b.x); r.y = (unsigned int)(a | b.y); r.z = (unsigned int)(a | b.z); r.w = (unsigned int)(a | b.w); return r; }
__HIP_REMOTE_VFN uint4& operator^=(uint4& a, const uint4& b) { a.x ^= b.x; a.y ^= b.y; a.z ^= b.z; a.w ^= b.w; return a; }
__HIP_REMOTE_VFN uint4& operator^=(uint4& a, unsigned int b) { a.x ^= b; a.y ^= b; a.z ^= b; a.w ^= b; return a; }
__HIP_REMOTE_VFN uint4 operator^(uint4 a, const uint4& b) { return a ^= b; }
__HIP_REMOTE_VFN uint4 operator^(uint4 a, unsigned int b) { return a ^= b; }
__HIP_REMOTE_VFN uint4 operator^(unsigned int a, const uint4& b) { uint4 r; r.x = (unsigned int)(a ^ b.x); r.y = (unsigned int)(a ^ b.y); r.z = (unsigned int)(a ^ b.z); r.w = (unsigned int)(a ^ b.w); return r; }
__HIP_REMOTE_VFN uint4& operator<<=(uint4& a, const uint4& b) { a.x <<= b.x; a.y <<= b.y; a.z <<= b.z; a.w <<= b.w; return a; }
__HIP_REMOTE_VFN uint4& operator<<=(uint4& a, unsigned int b) { a.x <<= b; a.y <<= b; a.z <<= b; a.w <<= b; return a; }
__HIP_REMOTE_VFN uint4 operator<<(uint4 a, const uint4& b) { return a <<= b; }
__HIP_REMOTE_VFN uint4 operator<<(uint4 a, unsigned int b) { return a <<= b; }
__HIP_REMOTE_VFN uint4 operator<<(unsigned int a, const uint4& b) { uint4 r; r.x = (unsigned int)(a << b.x); r.y = (unsigned int)(a << b.y); r.z = (unsigned int)(a << b.z); r.w = (unsigned int)(a << b.w); return r; }
__HIP_REMOTE_VFN uint4& operator>>=(uint4& a, const uint4& b) { a.x >>= b.x; a.y >>= b.y; a.z >>= b.z; a.w >>= b.w; return a; }
__HIP_REMOTE_VFN uint4& operator>>=(uint4& a, unsigned int b) { a.x >>= b; a.y >>= b; a.z >>= b; a.w >>= b; return a; }
__HIP_REMOTE_VFN uint4 operator>>(uint4 a, const uint4& b) { return a >>= b; }
__HIP_REMOTE_VFN uint4 operator>>(uint4 a, unsigned int b) { return a >>= b; }
__HIP_REMOTE_VFN uint4 operator>>(unsigned int a, const uint4& b) { uint4 r; r.x = (unsigned int)(a >> b.x); r.y = (unsigned int)(a >> b.y); r.z = (unsigned int)(a >> b.z); r.w = (unsigned int)(a >> b.w); return r; }
__HIP_REMOTE_VFN uint4 operator-(const uint4& a) { uint4 r; r.x = (unsigned int)-a.x; r.y = (unsigned int)-a.y; r.z = (unsigned int)-a.z; r.w = (unsigned int)-a.w; return r; }
__HIP_REMOTE_VFN uint4 operator+(const uint4& a) { return a; }
__HIP_REMOTE_VFN uint4 operator~(const uint4& a) { uint4 r; r.x = (unsigned int)~a.x; r.y = (unsigned int)~a.y; r.z = (unsigned int)~a.z; r.w = (unsigned int)~a.w; return r; }
__HIP_REMOTE_VFN bool operator==(const uint4& a, const uint4& b) { return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w; }
__HIP_REMOTE_VFN bool operator!=(const uint4& a, const uint4& b) { return !(a == b); }
/* long1 */
__HIP_REMOTE_VFN long1& operator+=(long1& a, const long1& b) { a.x += b.x; return a; }
__HIP_REMOTE_VFN long1& operator+=(long1& a, long b) { a.x += b; return a; }
__HIP_REMOTE_VFN long1 operator+(long1 a, const long1& b) { return a += b; }
__HIP_REMOTE_VFN long1 operator+(long1 a, long b) { return a += b; }
__HIP_REMOTE_VFN long1 operator+(long a, const long1& b) { long1 r; r.x = (long)(a + b.x); return r; }
__HIP_REMOTE_VFN long1& operator-=(long1& a, const long1& b) { a.x -= b.x; return a; }
__HIP_REMOTE_VFN long1& operator-=(long1& a, long b) { a.x -= b; return a; }
__HIP_REMOTE_VFN long1 operator-(long1 a, const long1& b) { return a -= b; }
__HIP_REMOTE_VFN long1 operator-(long1 a, long b) { return a -= b; }
__HIP_REMOTE_VFN long1 operator-(long a, const long1& b) { long1 r; r.x = (long)(a - b.x); return r; }
__HIP_REMOTE_VFN long1& operator*=(long1& a, const long1& b) { a.x *= b.x; return a; }
__HIP_REMOTE_VFN long1& operator*=(long1& a, long b) { a.x *= b; return a; }
__HIP_REMOTE_VFN long1 operator*(long1 a, const long1& b) { return a *= b; }
__HIP_REMOTE_VFN long1 operator*(long1 a, long b) { return a *= b; }
__HIP_REMOTE_VFN long1 operator*(long a, const long1& b) { long1 r; r.x = (long)(a * b.x); return r; }
__HIP_REMOTE_VFN long1& operator/=(long1& a, const long1& b) { a.x /= b.x; return a; }
__HIP_REMOTE_VFN long1& operator/=(long1& a, long b) { a.x /= b; return a; }
__HIP_REMOTE_VFN long1 operator/(long1 a, const long1& b) { return a /= b; }
__HIP_REMOTE_VFN long1 operator/(long1 a, long b) { return a /= b; }
__HIP_REMOTE_VFN long1 operator/(long a, const long1& b) { long1 r; r.x = (long)(a / b.x); return r; }
__HIP_REMOTE_VFN long1& operator%=(long1& a, const long1& b) { a.x %= b.x; return a; }
__HIP_REMOTE_VFN long1& operator%=(long1& a, long b) { a.x %= b; return a; }
__HIP_REMOTE_VFN long1 operator%(long1 a, const long1& b) { return a %= b; }
__HIP_REMOTE_VFN long1 operator%(long1 a, long b) { return a %= b; }
__HIP_REMOTE_VFN long1 operator%(long a, const long1& b) { long1 r; r.x = (long)(a % b.x); return r; }
__HIP_REMOTE_VFN long1& operator&=(long1& a, const long1& b) { a.x &= b.x; return a; }
__HIP_REMOTE_VFN long1& operator&=(long1& a, long b) { a.x &= b; return a; }
__HIP_REMOTE_VFN long1 operator&(long1 a, const long1& b) { return a &= b; }
__HIP_REMOTE_VFN long1 operator&(long1 a, long b) { return a &= b; }
__HIP_REMOTE_VFN long1 operator&(long a, const long1& b) { long1 r; r.x = (long)(a & b.x); return r; }
__HIP_REMOTE_VFN long1& operator|=(long1& a, const long1& b) { a.x |= b.x; return a; }
__HIP_REMOTE_VFN long1& operator|=(long1& a, long b) { a.x |= b; return a; }
__HIP_REMOTE_VFN long1 operator|(long1 a, const long1& b) { return a |= b; }
__HIP_REMOTE_VFN long1 operator|(long1 a, long b) { return a |= b; }
__HIP_REMOTE_VFN long1 operator|(long a, const long1& b) { long1 r; r.x = (long)(a | b.x); return r; }
__HIP_REMOTE_VFN long1& operator^=(long1& a, const long1& b) { a.x ^= b.x; return a; }
__HIP_REMOTE_VFN long1& operator^=(long1& a, long b) { a.x ^= b; return a; }
__HIP_REMOTE_VFN long1 operator^(long1 a, const long1& b) { return a ^= b; }
__HIP_REMOTE_VFN long1 operator^(long1 a, long b) { return a ^= b; }
__HIP_REMOTE_VFN long1 operator^(long a, const long1& b) { long1 r; r.x = (long)(a ^ b.x); return r; }
__HIP_REMOTE_VFN long1& operator<<=(long1& a, const long1& b) { a.x <<= b.x; return a; }
__HIP_REMOTE_VFN long1& operator<<=(long1& a, long b) { a.x <<= b; return a; }
__HIP_REMOTE_VFN long1 operator<<(long1 a, const long1& b) { return a <<= b; }
__HIP_REMOTE_VFN long1 operator<<(long1 a, long b) { return a <<= b; }
__HIP_REMOTE_VFN long1 operator<<(long a, const long1& b) { long1 r; r.x = (long)(a << b.x); return r; }
__HIP_REMOTE_VFN long1& operator>>=(long1& a, const long1& b) { a.x >>= b.x; return a; }
__HIP_REMOTE_VFN long1& operator>>=(long1& a, long b) { a.x >>= b; return a; }
__HIP_REMOTE_VFN long1 operator>>(long1 a, const long1& b) { return a >>= b; }
__HIP_REMOTE_VFN long1 operator>>(long1 a, long b) { return a >>= b; }
__HIP_REMOTE_VFN long1 operator>>(long a, const long1& b) { long1 r; r.x = (long)(a >> b.x); return r; }
__HIP_REMOTE_VFN long1 operator-(const long1& a) { long1 r; r.x = (long)-a.x; return r; }
__HIP_REMOTE_VFN long1 operator+(const long1& a) { return a; }
__HIP_REMOTE_VFN long1 operator~(const long1& a) { long1 r; r.x = (long)~a.x; return r; }
__HIP_REMOTE_VFN bool operator==(const long1& a, const long1& b) { return a.x == b.x; }
__HIP_REMOTE_VFN bool operator!=(const long1& a, const long1& b) { return !(a == b); }
/* long2 */
__HIP_REMOTE_VFN long2& operator+=(long2& a, const long2& b) { a.x += b.x; a.y += b.y; return a; }
__HIP_REMOTE_VFN long2& operator+=(long2& a, long b) { a.x += b; a.y += b; return a; }
__HIP_REMOTE_VFN long2 operator+(long2 a, const long2& b) { return a += b; }
__HIP_REMOTE_VFN long2 operator+(long2 a, long b) { return a += b; }
__HIP_REMOTE_VFN long2 operator+(long a, const long2& b) { long2 r; r.x = (long)(a + b.x); r.y = (long)(a + b.y); return r; }
__HIP_REMOTE_VFN long2& operator-=(long2& a, const long2& b) { a.x -= b.x; a.y -= b.y; return a; }
__HIP_REMOTE_VFN long2& operator-=(long2& a, long b) { a.x -= b; a.y -= b; return a; }
__HIP_REMOTE_VFN long2 operator-(long2 a, const long2& b) { return a -= b; }
__HIP_REMOTE_VFN long2 operator-(long2 a, long b) { return a -= b; }
__HIP_REMOTE_VFN long2 operator-(long a, const long2& b) { long2 r; r.x = (long)(a - b.x); r.y = (long)(a - b.y); return r; }
__HIP_REMOTE_VFN long2& operator*=(long2& a, const long2& b) { a.x *= b.x; a.y *= b.y; return a; }
__HIP_REMOTE_VFN long2& operator*=(long2& a, long b) { a.x *= b; a.y *= b; return a; }
__HIP_REMOTE_VFN long2 operator*(long2 a, const long2& b) { return a *= b; }
__HIP_REMOTE_VFN long2 operator*(long2 a, long b) { return a *= b; }
__HIP_REMOTE_VFN long2 operator*(long a, const long2& b) { long2 r; r.x = (long)(a * b.x); r.y = (long)(a * b.y); return r; }
__HIP_REMOTE_VFN long2& operator/=(long2& a, const long2& b) { a.x /= b.x; a.y /= b.y; return a; }
__HIP_REMOTE_VFN long2& operator/=(long2& a, long b) { a.x /= b; a.y /= b; return a; }
__HIP_REMOTE_VFN long2 operator/(long2 a, const long2& b) { return a /= b; }
__HIP_REMOTE_VFN long2 operator/(long2 a, long b) { return a /= b; }
__HIP_REMOTE_VFN long2 operator/(long a, const long2& b) { long2 r; r.x = (long)(a / b.x); r.y = (long)(a / b.y); return r; }
__HIP_REMOTE_VFN long2& operator%=(long2& a, const long2& b) { a.x %= b.x; a.y %= b.y; return a; }
__HIP_REMOTE_VFN long2& operator%=(long2& a, long b) { a.x %= b; a.y %= b; return a; }
__HIP_REMOTE_VFN long2 operator%(long2 a, const long2& b) { return a %= b; }
__HIP_REMOTE_VFN long2 operator%(long2 a, long b) { return a %= b; }
__HIP_REMOTE_VFN long2 operator%(long a, const long2& b) { long2 r; r.x = (long)(a % b.x); r.y = (long)(a % b.y); return r; }
__HIP_REMOTE_VFN long2& operator&=(long2& a, const long2& b) { a.x &= b.x; a.y &= b.y; return a; }
__HIP_REMOTE_VFN long2& operator&=(long2& a, long b) { a.x &= b; a.y &= b; return a; }
__HIP_REMOTE_VFN long2 operator&(long2 a, const long2& b) { return a &= b; }
__HIP_REMOTE_VFN long2 operator&(long2 a, long b) { return a &= b; }
__HIP_REMOTE_VFN long2 operator&(long a, const long2& b) { long2 r; r.x = (long)(a & b.x); r.y = (long)(a & b.y); return r; }
__HIP_REMOTE_VFN long2& operator|=(long2& a, const long2& b) { a.x |= b.x; a.y |= b.y; return a; }
__HIP_REMOTE_VFN long2& operator|=(long2& a, long b) { a.x |= b; a.y |= b; return a; }
__HIP_REMOTE_VFN long2 operator|(long2 a, const long2& b) { return a |= b; }
__HIP_REMOTE_VFN long2 operator|(long2 a, long b) { return a |= b; }
__HIP_REMOTE_VFN long2 operator|(long a, const long2& b) { long2 r; r.x = (long)(a | b.x); r.y = (long)(a | b.y); return r; }
__HIP_REMOTE_VFN long2& operator^=(long2& a, const long2& b) { a.x ^= b.x; a.y ^= b.y; return a; }
__HIP_REMOTE_VFN long2& operator^=(long2& a, long b) { a.x ^= b; a.y ^= b; return a; }
__HIP_REMOTE_VFN long2 operator^(long2 a, const long2& b) { return a ^= b; }
__HIP_REMOTE_VFN long2 operator^(long2 a, long b) { return a ^= b; }
__HIP_REMOTE_VFN long2 operator^(long a, const long2& b) { long2 r; r.x = (long)(a ^ b.x); r.y = (long)(a ^ b.y); return r; }
__HIP_REMOTE_VFN long2& operator<<=(long2& a, const long2& b) { a.x <<= b.x; a.y <<= b.y; return a; }
__HIP_REMOTE_VFN long2& operator<<=(long2& a, long b) { a.x <<= b; a.y <<= b; return a; }
__HIP_REMOTE_VFN long2 operator<<(long2 a, const long2& b) { return a <<= b; }
__HIP_REMOTE_VFN long2 operator<<(long2 a, long b) { return a <<= b; }
__HIP_REMOTE_VFN long2 operator<<(long a, const long2& b) { long2 r; r.x = (long)(a << b.x); r.y = (long)(a << b.y); return r; }
__HIP_REMOTE_VFN long2& operator>>=(long2& a, const long2& b) { a.x >>= b.x; a.y >>= b.y; return a; }
__HIP_REMOTE_VFN long2& operator>>=(long2& a, long b) { a.x >>= b; a.y >>= b; return a; }
__HIP_REMOTE_VFN long2 operator>>(long2 a, const long2& b) { return a >>= b; }
__HIP_REMOTE_VFN long2 operator>>(long2 a, long b) { return a >>= b; }
__HIP_REMOTE_VFN long2 operator>>(long a, const long2& b) { long2 r; r.x = (long)(a >> b.x); r.y = (long)(a >> b.y); return r; }
__HIP_REMOTE_VFN long2 operator-(const long2& a) { long2 r; r.x = (long)-a.x; r.y = (long)-a.y; return r; }
__HIP_REMOTE_VFN long2 operator+(const long2& a) { return a; }
__HIP_REMOTE_VFN long2 operator~(const long2& a) { long2 r; r.x = (long)~a.x; r.y = (long)~a.y; return r; }
__HIP_REMOTE_VFN bool operator==(const long2& a, const long2& b) { return a.x == b.x && a.y == b.y; }
__HIP_REMOTE_VFN bool operator!=(const long2& a, const long2& b) { return !(a == b); }
/* long3 */
__HIP_REMOTE_VFN long3& operator+=(long3& a, const long3& b) { a.x += b.x; a.y += b.y; a.z += b.z; return a; }
__HIP_REMOTE_VFN long3& operator+=(long3& a, long b) { a.x += b; a.y += b; a.z += b; return a; }
__HIP_REMOTE_VFN long3 operator+(long3 a, const long3& b) { return a += b; }
__HIP_REMOTE_VFN long3 operator+(long3 a, long b) { return a += b; }
__HIP_REMOTE_VFN long3 operator+(long a, const long3& b) { long3 r; r.x = (long)(a + b.x); r.y = (long)(a + b.y); r.z = (long)(a + b.z); return r; }
__HIP_REMOTE_VFN long3& operator-=(long3& a, const long3& b) { a.x -= b.x; a.y -= b.y; a.z -= b.z; return a; }
__HIP_REMOTE_VFN long3& operator-=(long3& a, long b) { a.x -= b; a.y -= b; a.z -= b; return a; }
__HIP_REMOTE_VFN long3 operator-(long3 a, const long3& b) { return a -= b; }
__HIP_REMOTE_VFN long3 operator-(long3 a, long b) { return a -= b; }
__HIP_REMOTE_VFN long3 operator-(long a, const long3& b) { long3 r; r.x = (long)(a - b.x); r.y = (long)(a - b.y); r.z = (long)(a - b.z); return r; }
__HIP_REMOTE_VFN long3& operator*=(long3& a, const long3& b) { a.x *= b.x; a.y *= b.y; a.z *= b.z; return a; }
__HIP_REMOTE_VFN long3& operator*=(long3& a, long b) { a.x *= b; a.y *= b; a.z *= b; return a; }
__HIP_REMOTE_VFN long3 operator*(long3 a, const long3& b) { return a *= b; }
__HIP_REMOTE_VFN long3 operator*(long3 a, long b) { return a *= b; }
__HIP_REMOTE_VFN long3 operator*(long a, const long3& b) { long3 r; r.x = (long)(a * b.x); r.y = (long)(a * b.y); r.z = (long)(a * b.z); return r; }
__HIP_REMOTE_VFN long3& operator/=(long3& a, const long3& b) { a.x /= b.x; a.y /= b.y; a.z /= b.z; return a; }
__HIP_REMOTE_VFN long3& operator/=(long3& a, long b) { a.x /= b; a.y /= b; a.z /= b; return a; }
__HIP_REMOTE_VFN long3 operator/(long3 a, const long3& b) { return a /= b; }
__HIP_REMOTE_VFN long3 operator/(long3 a, long b) { return a /= b; }
__HIP_REMOTE_VFN long3 operator/(long a, const long3& b) { long3 r; r.x = (long)(a / b.x); r.y = (long)(a / b.y); r.z = (long)(a / b.z); return r; }
__HIP_REMOTE_VFN long3& operator%=(long3& a, const long3& b) { a.x %= b.x; a.y %= b.y; a.z %= b.z; return a; }
__HIP_REMOTE_VFN long3& operator%=(long3& a, long b) { a.x %= b; a.y %= b; a.z %= b; return a; }
__HIP_REMOTE_VFN long3 operator%(long3 a, const long3& b) { return a %= b; }
__HIP_REMOTE_VFN long3 operator%(long3 a, long b) { return a %= b; }
__HIP_REMOTE_VFN long3 operator%(long a, const long3& b) { long3 r; r.x = (long)(a % b.x); r.y = (long)(a % b.y); r.z = (long)(a % b.z); return r; }
__HIP_REMOTE_VFN long3& operator&=(long3& a, const long3& b) { a.x &= b.x; a.y &= b.y; a.z &= b.z; return a; }
__HIP_REMOTE_VFN long3& operator&=(long3& a, long b) { a.x &= b; a.y &= b; a.z &= b; return a; }
__HIP_REMOTE_VFN long3 operator&(long3 a, const long3& b) { return a &= b; }
__HIP_REMOTE_VFN long3 operator&(long3 a, long b) { return a &= b; }
__HIP_REMOTE_VFN long3 operator&(long a, const long3& b) { long3 r; r.x = (long)(a & b.x); r.y = (long)(a & b.y); r.z = (long)(a & b.z); return r; }
__HIP_REMOTE_VFN long3& operator|=(long3& a, const long3& b) { a.x |= b.x; a.y |= b.y; a.z |= b.z; return a; }
__HIP_REMOTE_VFN long3& operator|=(long3& a, long b) { a.x |= b; a.y |= b; a.z |= b; return a; }
__HIP_REMOTE_VFN long3 operator|(long3 a, const long3& b) { return a |= b; }
__HIP_REMOTE_VFN long3 operator|(long3 a, long b) { return a |= b; }
__HIP_REMOTE_VFN long3 operator|(long a, const long3& b) { long3 r; r.x = (long)(a | b.x); r.y = (long)(a | b.y); r.z = (long)(a | b.z); return r; }
__HIP_REMOTE_VFN long3& operator^=(long3& a, const long3& b) { a.x ^= b.x; a.y ^= b.y; a.z ^= b.z; return a; }
__HIP_REMOTE_VFN long3& operator^=(long3& a, long b) { a.x ^= b; a.y ^= b; a.z ^= b; return a; }
__HIP_REMOTE_VFN long3 operator^(long3 a, const long3& b) { return a ^= b; }
__HIP_REMOTE_VFN long3 operator^(long3 a, long b) { return a ^= b; }
__HIP_REMOTE_VFN long3 operator^(long a, const long3& b) { long3 r; r.x = (long)(a ^ b.x); r.y = (long)(a ^ b.y); r.z = (long)(a ^ b.z); return r; }
__HIP_REMOTE_VFN long3& operator<<=(long3& a, const long3& b) { a.x <<= b.x; a.y <<= b.y; a.z <<= b.z; return a; }
__HIP_REMOTE_VFN long3& operator<<=(long3& a, long b) { a.x <<= b; a.y <<= b; a.z <<= b; return a; }
__HIP_REMOTE_VFN long3 operator<<(long3 a, const long3& b) { return a <<= b; }
__HIP_REMOTE_VFN long3 operator<<(long3 a, long b) { return a <<= b; }
__HIP_REMOTE_VFN long3 operator<<(long a, const long3& b) { long3 r; r.x = (long)(a << b.x); r.y = (long)(a << b.y); r.z = (long)(a << b.z); return r; }
__HIP_REMOTE_VFN long3& operator>>=(long3& a, const long3& b) { a.x >>= b.x; a.y >>= b.y; a.z >>= b.z; return a; }
__HIP_REMOTE_VFN long3& operator>>=(long3& a, long b) { a.x >>= b; a.y >>= b; a.z >>= b; return a; }
__HIP_REMOTE_VFN long3 operator>>(long3 a, const long3& b) { return a >>= b; }
__HIP_REMOTE_VFN long3 operator>>(long3 a, long b) { return a >>= b; }
__HIP_REMOTE_VFN long3 operator>>(long a, const long3& b) { long3 r; r.x = (long)(a >> b.x); r.y = (long)(a >> b.y); r.z = (long)(a >> b.z); return r; }
__HIP_REMOTE_VFN long3 operator-(const long3& a) { long3 r; r.x = (long)-a.x; r.y = (long)-a.y; r.z = (long)-a.z; return r; }
__HIP_REMOTE_VFN long3 operator+(const long3& a) { return a; }
__HIP_REMOTE_VFN long3 operator~(const long3& a) { long3 r; r.x = (long)~a.x; r.y = (long)~a.y; r.z = (long)~a.z; return r; }
__HIP_REMOTE_VFN bool operator==(const long3& a, const long3& b) { return a.x == b.x && a.y == b.y && a.z == b.z; }
__HIP_REMOTE_VFN bool operator!=(const long3& a, const long3& b) { return !(a == b); }
/* long4 */
__HIP_REMOTE_VFN long4& operator+=(long4& a, const long4& b) { a.x += b.x; a.y += b.y; a.z += b.z; a.w += b.w; return a; }
__HIP_REMOTE_VFN long4& operator+=(long4& a, long b) { a.x += b; a.y += b; a.z += b; a.w += b; return a; }
__HIP_REMOTE_VFN long4 operator+(long4 a, const long4& b) { return a += b; }
__HIP_REMOTE_VFN long4 operator+(long4 a, long b) { return a += b; }
__HIP_REMOTE_VFN long4 operator+(long a, const long4& b) { long4 r; r.x = (long)(a + b.x); r.y = (long)(a + b.y); r.z = (long)(a + b.z); r.w = (long)(a + b.w); return r; }
__HIP_REMOTE_VFN long4& operator-=(long4& a, const long4& b) { a.x -= b.x; a.y -= b.y; a.z -= b.z; a.w -= b.w; return a; }
__HIP_REMOTE_VFN long4& operator-=(long4& a, long b) { a.x -= b; a.y -= b; a.z -= b; a.w -= b; return a; }
__HIP_REMOTE_VFN long4 operator-(long4 a, const long4& b) { return a -= b; }
__HIP_REMOTE_VFN long4 operator-(long4 a, long b) { return a -= b; }
__HIP_REMOTE_VFN long4 operator-(long a, const long4& b) { long4 r; r.x = (long)(a - b.x); r.y = (long)(a - b.y); r.z = (long)(a - b.z); r.w = (long)(a - b.w); return r; }
__HIP_REMOTE_VFN long4& operator*=(long4& a, const long4& b) { a.x *= b.x; a.y *= b.y; a.z *= b.z; a.w *= b.w; return a; }
__HIP_REMOTE_VFN long4& operator*=(long4& a, long b) { a.x *= b; a.y *= b; a.z *= b; a.w *= b; return a; }
__HIP_REMOTE_VFN long4 operator*(long4 a, const long4& b) { return a *= b; }
__HIP_REMOTE_VFN long4 operator*(long4 a, long b) { return a *= b; }
__HIP_REMOTE_VFN long4 operator*(long a, const long4& b) { long4 r; r.x = (long)(a * b.x); r.y = (long)(a * b.y); r.z = (long)(a * b.z); r.w = (long)(a * b.w); return r; }
__HIP_REMOTE_VFN long4& operator/=(long4& a, const long4& b) { a.x /= b.x; a.y /= b.y; a.z /= b.z; a.w /= b.w; return a; }
__HIP_REMOTE_VFN long4& operator/=(long4& a, long b) { a.x /= b; a.y /= b; a.z /= b; a.w /= b; return a; }
__HIP_REMOTE_VFN long4 operator/(long4 a, const long4& b) { return a /= b; }
__HIP_REMOTE_VFN long4 operator/(long4 a, long b) { return a /= b; }
__HIP_REMOTE_VFN long4 operator/(long a, const long4& b) { long4 r; r.x = (long)(a / b.x); r.y = (long)(a / b.y); r.z = (long)(a / b.z); r.w = (long)(a / b.w); return r; }
__HIP_REMOTE_VFN long4& operator%=(long4& a, const long4& b) { a.x %= b.x; a.y %= b.y; a.z %= b.z; a.w %= b.w; return a; }
__HIP_REMOTE_VFN long4& operator%=(long4& a, long b) { a.x %= b; a.y %= b; a.z %= b; a.w %= b; return a; }
__HIP_REMOTE_VFN long4 operator%(long4 a, const long4& b) { return a %= b; }
__HIP_REMOTE_VFN long4 operator%(long4 a, long b) { return a %= b; }
__HIP_REMOTE_VFN long4 operator%(long a, const long4& b) { long4 r; r.x = (long)(a % b.x); r.y = (long)(a % b.y); r.z = (long)(a % b.z); r.w = (long)(a % b.w); return r; }
__HIP_REMOTE_VFN long4& operator&=(long4& a, const long4& b) { a.x &= b.x; a.y &= b.y; a.z &= b.z; a.w &= b.w; return a; }
__HIP_REMOTE_VFN long4& operator&=(long4& a, long b) { a.x &= b; a.y &= b; a.z &= b; a.w &= b; return a; }
__HIP_REMOTE_VFN long4 operator&(long4 a, const long4& b) { return a &= b; }
__HIP_REMOTE_VFN long4 operator&(long4 a, long b) { return a &= b; }
__HIP_REMOTE_VFN long4 operator&(long a, const long4& b) { long4 r; r.x = (long)(a & b.x); r.y = (long)(a & b.y); r.z = (long)(a & b.z); r.w = (long)(a & b.w); return r; }
__HIP_REMOTE_VFN long4& operator|=(long4& a, const long4& b) { a.x |= b.x; a.y |= b.y; a.z |= b.z; a.w |= b.w; return a; }
__HIP_REMOTE_VFN long4& operator|=(long4& a, long b) { a.x |= b; a.y |= b; a.z |= b; a.w |= b; return a; }
__HIP_REMOTE_VFN long4 operator|(long4 a, const long4& b) { return a |= b; }
__HIP_REMOTE_VFN long4 operator|(long4 a, long b) { return a |= b; }
__HIP_REMOTE_VFN long4 operator|(long a, const long4& b) { long4 r; r.x = (long)(a | b.x); r.y = (long)(a | b.y); r.z = (long)(a | b.z); r.w = (long)(a | b.w); return r; }
__HIP_REMOTE_VFN long4& operator^=(long4& a, const long4& b) { a.x ^= b.x; a.y ^= b.y; a.z ^= b.z; a.w ^= b.w; return a; }
__HIP_REMOTE_VFN long4& operator^=(long4& a, long b) { a.x ^= b; a.y ^= b; a.z ^= b; a.w ^= b; return a; }
__HIP_REMOTE_VFN long4 operator^(long4 a, const long4& b) { return a ^= b; }
__HIP_REMOTE_VFN long4 operator^(long4 a, long b) { return a ^= b; }
__HIP_REMOTE_VFN long4 operator^(long a, const long4& b) { long4 r; r.x = (long)(a ^ b.x); r.y = (long)(a ^ b.y); r.z = (long)(a ^ b.z); r.w = (long)(a ^ b.w); return r; }
__HIP_REMOTE_VFN long4& operator<<=(long4& a, const long4& b) { a.x <<= b.x; a.y <<= b.y; a.z <<= b.z; a.w <<= b.w; return a; }
__HIP_REMOTE_VFN long4& operator<<=(long4& a, long b) { a.x <<= b; a.y <<= b; a.z <<= b; a.w <<= b; return a; }
__HIP_REMOTE_VFN long4 operator<<(long4 a, const long4& b) { return a <<= b; }
__HIP_REMOTE_VFN long4 operator<<(long4 a, long b) { return a <<= b; }
__HIP_REMOTE_VFN long4 operator<<(long a, const long4& b) { long4 r; r.x = (long)(a << b.x); r.y = (long)(a << b.y); r.z = (long)(a << b.z); r.w = (long)(a << b.w); return r; }
__HIP_REMOTE_VFN long4& operator>>=(long4& a, const long4& b) { a.x >>= b.x; a.y >>= b.y; a.z >>= b.z; a.w >>= b.w; return a; }
__HIP_REMOTE_VFN long4& operator>>=(long4& a, long b) { a.x >>= b; a.y >>= b; a.z >>= b; a.w >>= b; return a; }
__HIP_REMOTE_VFN long4 operator>>(long4 a, const long4& b) { return a >>= b; }
__HIP_REMOTE_VFN long4 operator>>(long4 a, long b) { return a >>= b; }
__HIP_REMOTE_VFN long4 operator>>(long a, const long4& b) { long4 r; r.x = (long)(a >> b.x); r.y = (long)(a >> b.y); r.z = (long)(a >> b.z); r.w = (long)(a >> b.w); return r; }
__HIP_REMOTE_VFN long4 operator-(const long4& a) { long4 r; r.x = (long)-a.x; r.y = (long)-a.y; r.z = (long)-a.z; r.w = (long)-a.w; return r; }
__HIP_REMOTE_VFN long4 operator+(const long4& a) { return a; }
__HIP_REMOTE_VFN long4 operator~(const long4& a) { long4 r; r.x = (long)~a.x; r.y = (long)~a.y; r.z = (long)~a.z; r.w = (long)~a.w; return r; }
__HIP_REMOTE_VFN bool operator==(const long4& a, const long4& b) { return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w; }
__HIP_REMOTE_VFN bool operator!=(const long4& a, const long4& b) { return !(a == b); }
/* ulong1 */
__HIP_REMOTE_VFN ulong1& operator+=(ulong1& a, const ulong1& b) { a.x += b.x; return a; }
__HIP_REMOTE_VFN ulong1& operator+=(ulong1& a, unsigned long b) { a.x += b; return a; }
__HIP_REMOTE_VFN ulong1 operator+(ulong1 a, const ulong1& b) { return a += b; }
__HIP_REMOTE_VFN ulong1 operator+(ulong1 a, unsigned long b) { return a += b; }
__HIP_REMOTE_VFN ulong1 operator+(unsigned long a, const ulong1& b) { ulong1 r; r.x = (unsigned long)(a + b.x); return r; }
__HIP_REMOTE_VFN ulong1& operator-=(ulong1& a, const ulong1& b) { a.x -= b.x; return a; }
__HIP_REMOTE_VFN ulong1& operator-=(ulong1& a, unsigned long b) { a.x -= b; return a; }
__HIP_REMOTE_VFN ulong1 operator-(ulong1 a, const ulong1& b) { return a -= b; }
__HIP_REMOTE_VFN ulong1 operator-(ulong1 a, unsigned long b) { return a -= b; }
__HIP_REMOTE_VFN ulong1 operator-(unsigned long a, const ulong1& b) { ulong1 r; r.x = (unsigned long)(a - b.x); return r; }
__HIP_REMOTE_VFN ulong1& operator*=(ulong1& a, const ulong1& b) { a.x *= b.x; return a; }
__HIP_REMOTE_VFN ulong1& operator*=(ulong1& a, unsigned long b) { a.x *= b; return a; }
__HIP_REMOTE_VFN ulong1 operator*(ulong1 a, const ulong1& b) { return a *= b; }
__HIP_REMOTE_VFN ulong1 operator*(ulong1 a, unsigned long b) { return a *= b; }
__HIP_REMOTE_VFN ulong1 operator*(unsigned long a, const ulong1& b) { ulong1 r; r.x = (unsigned long)(a * b.x); return r; }
__HIP_REMOTE_VFN ulong1& operator/=(ulong1& a, const ulong1& b) { a.x /= b.x; return a; }
__HIP_REMOTE_VFN ulong1& operator/=(ulong1& a, unsigned long b) { a.x /= b; return a; }
__HIP_REMOTE_VFN ulong1 operator/(ulong1 a, const ulong1& b) { return a /= b; }
__HIP_REMOTE_VFN ulong1 operator/(ulong1 a, unsigned long b) { return a /= b; }
__HIP_REMOTE_VFN ulong1 operator/(unsigned long a, const ulong1& b) { ulong1 r; r.x = (unsigned long)(a / b.x); return r; }
__HIP_REMOTE_VFN ulong1& operator%=(ulong1& a, const ulong1& b) { a.x %= b.x; return a; }
__HIP_REMOTE_VFN ulong1& operator%=(ulong1& a, unsigned long b) { a.x %= b; return a; }
__HIP_REMOTE_VFN ulong1 operator%(ulong1 a, const ulong1& b) { return a %= b; }
__HIP_REMOTE_VFN ulong1 operator%(ulong1 a, unsigned long b) { return a %= b; }
__HIP_REMOTE_VFN ulong1 operator%(unsigned long a, const ulong1& b) { ulong1 r; r.x = (unsigned long)(a % b.x); return r; }
__HIP_REMOTE_VFN ulong1& operator&=(ulong1& a, const ulong1& b) { a.x &= b.x; return a; }
__HIP_REMOTE_VFN ulong1& operator&=(ulong1& a, unsigned long b) { a.x &= b; return a; }
__HIP_REMOTE_VFN ulong1 operator&(ulong1 a, const ulong1& b) { return a &= b; }
__HIP_REMOTE_VFN ulong1 operator&(ulong1 a, unsigned long b) { return a &= b; }
__HIP_REMOTE_VFN ulong1 operator&(unsigned long a, const ulong1& b) { ulong1 r; r.x = (unsigned long)(a & b.x); return r; }
__HIP_REMOTE_VFN ulong1& operator|=(ulong1& a, const ulong1& b) { a.x |= b.x; return a; }
__HIP_REMOTE_VFN ulong1& operator|=(ulong1& a, unsigned long b) { a.x |= b; return a; }
__HIP_REMOTE_VFN ulong1 operator|(ulong1 a, const ulong1& b) { return a |= b; }
__HIP_REMOTE_VFN ulong1 operator|(ulong1 a, unsigned long b) { return a |= b; }
__HIP_REMOTE_VFN ulong1 operator|(unsigned long a, const ulong1& b) { ulong1 r; r.x = (unsigned long)(a | b.x); return r; }
__HIP_REMOTE_VFN ulong1& operator^=(ulong1& a, const ulong1& b) { a.x ^= b.x; return a; }
__HIP_REMOTE_VFN ulong1& operator^=(ulong1& a, unsigned long b) { a.x ^= b; return a; }
__HIP_REMOTE_VFN ulong1 operator^(ulong1 a, const ulong1& b) { return a ^= b; }
__HIP_REMOTE_VFN ulong1 operator^(ulong1 a, unsigned long b) { return a ^= b; }
__HIP_REMOTE_VFN ulong1 operator^(unsigned long a, const ulong1& b) { ulong1 r; r.x = (unsigned long)(a ^ b.x); return r; }
__HIP_REMOTE_VFN ulong1& operator<<=(ulong1& a, const ulong1& b) { a.x <<= b.x; return a; }
__HIP_REMOTE_VFN ulong1& operator<<=(ulong1& a, unsigned long b) { a.x <<= b; return a; }
__HIP_REMOTE_VFN ulong1 operator<<(ulong1 a, const ulong1& b) { return a <<= b; }
__HIP_REMOTE_VFN ulong1 operator<<(ulong1 a, unsigned long b) { return a <<= b; }
__HIP_REMOTE_VFN ulong1 operator<<(unsigned long a, const ulong1& b) { ulong1 r; r.x = (unsigned long)(a << b.x); return r; }
__HIP_REMOTE_VFN ulong1& operator>>=(ulong1& a, const ulong1& b) { a.x >>= b.x; return a; }
__HIP_REMOTE_VFN ulong1& operator>>=(ulong1& a, unsigned long b) { a.x >>= b; return a; }
__HIP_REMOTE_VFN ulong1 operator>>(ulong1 a, const ulong1& b) { return a >>= b; }
__HIP_REMOTE_VFN ulong1 operator>>(ulong1 a, unsigned long b) { return a >>= b; }
__HIP_REMOTE_VFN ulong1 operator>>(unsigned long a, const ulong1& b) { ulong1 r; r.x = (unsigned long)(a >> b.x); return r; }
__HIP_REMOTE_VFN ulong1 operator-(const ulong1& a) { ulong1 r; r.x = (unsigned long)-a.x; return r; }
__HIP_REMOTE_VFN ulong1 operator+(const ulong1& a) { return a; }
__HIP_REMOTE_VFN ulong1 operator~(const ulong1& a) { ulong1 r; r.x = (unsigned long)~a.x; return r; }
__HIP_REMOTE_VFN bool operator==(const ulong1& a, const ulong1& b) { return a.x == b.x; }
__HIP_REMOTE_VFN bool operator!=(const ulong1& a, const ulong1& b) { return !(a == b); }
/* ulong2 */
__HIP_REMOTE_VFN ulong2& operator+=(ulong2& a, const ulong2& b) { a.x += b.x; a.y += b.y; return a; }
__HIP_REMOTE_VFN ulong2& operator+=(ulong2& a, unsigned long b) { a.x += b; a.y += b; return a; }
__HIP_REMOTE_VFN ulong2 operator+(ulong2 a, const ulong2& b) { return a += b; }
__HIP_REMOTE_VFN ulong2 operator+(ulong2 a, unsigned long b) { return a += b; }
__HIP_REMOTE_VFN ulong2 operator+(unsigned long a, const ulong2& b) { ulong2 r; r.x = (unsigned long)(a + b.x); r.y = (unsigned long)(a + b.y); return r; }
__HIP_REMOTE_VFN ulong2& operator-=(ulong2& a, const ulong2& b) { a.x -= b.x; a.y -= b.y; return a; }
__HIP_REMOTE_VFN ulong2& operator-=(ulong2& a, unsigned long b) { a.x -= b; a.y -= b; return a; }
__HIP_REMOTE_VFN ulong2 operator-(ulong2 a, const ulong2& b) { return a -= b; }
__HIP_REMOTE_VFN ulong2 operator-(ulong2 a, unsigned long b) { return a -= b; }
__HIP_REMOTE_VFN ulong2 operator-(unsigned long a, const ulong2& b) { ulong2 r; r.x = (unsigned long)(a - b.x); r.y = (unsigned long)(a - b.y); return r; }
__HIP_REMOTE_VFN ulong2& operator*=(ulong2& a, const ulong2& b) { a.x *= b.x; a.y *= b.y; return a; }
__HIP_REMOTE_VFN ulong2& operator*=(ulong2& a, unsigned long b) { a.x *= b; a.y *= b; return a; }
__HIP_REMOTE_VFN ulong2 operator*(ulong2 a, const ulong2& b) { return a *= b; }
__HIP_REMOTE_VFN ulong2 operator*(ulong2 a, unsigned long b) { return a *= b; }
__HIP_REMOTE_VFN ulong2 operator*(unsigned long a, const ulong2& b) { ulong2 r; r.x = (unsigned long)(a * b.x); r.y = (unsigned long)(a * b.y); return r; }
__HIP_REMOTE_VFN ulong2& operator/=(ulong2& a, const ulong2& b) { a.x /= b.x; a.y /= b.y; return a; }
__HIP_REMOTE_VFN ulong2& operator/=(ulong2& a, unsigned long b) { a.x /= b; a.y /= b; return a; }
__HIP_REMOTE_VFN ulong2 operator/(ulong2 a, const ulong2& b) { return a /= b; }
__HIP_REMOTE_VFN ulong2 operator/(ulong2 a, unsigned long b) { return a /= b; }
__HIP_REMOTE_VFN ulong2 operator/(unsigned long a, const ulong2& b) { ulong2 r; r.x = (unsigned long)(a / b.x); r.y = (unsigned long)(a / b.y); return r; }
__HIP_REMOTE_VFN ulong2& operator%=(ulong2& a, const ulong2& b) { a.x %= b.x; a.y %= b.y; return a; }
__HIP_REMOTE_VFN ulong2& operator%=(ulong2& a, unsigned long b) { a.x %= b; a.y %= b; return a; }
__HIP_REMOTE_VFN ulong2 operator%(ulong2 a, const ulong2& b) { return a %= b; }
__HIP_REMOTE_VFN ulong2 operator%(ulong2 a, unsigned long b) { return a %= b; }
__HIP_REMOTE_VFN ulong2 operator%(unsigned long a, const ulong2& b) { ulong2 r; r.x = (unsigned long)(a % b.x); r.y = (unsigned long)(a % b.y); return r; }
__HIP_REMOTE_VFN ulong2& operator&=(ulong2& a, const ulong2& b) { a.x &= b.x; a.y &= b.y; return a; }
__HIP_REMOTE_VFN ulong2& operator&=(ulong2& a, unsigned long b) { a.x &= b; a.y &= b; return a; }
__HIP_REMOTE_VFN ulong2 operator&(ulong2 a, const ulong2& b) { return a &= b; }
__HIP_REMOTE_VFN ulong2 operator&(ulong2 a, unsigned long b) { return a &= b; }
__HIP_REMOTE_VFN ulong2 operator&(unsigned long a, const ulong2& b) { ulong2 r; r.x = (unsigned long)(a & b.x); r.y = (unsigned long)(a & b.y); return r; }
__HIP_REMOTE_VFN ulong2& operator|=(ulong2& a, const ulong2& b) { a.x |= b.x; a.y |= b.y; return a; }
__HIP_REMOTE_VFN ulong2& operator|=(ulong2& a, unsigned long b) { a.x |= b; a.y |= b; return a; }
__HIP_REMOTE_VFN ulong2 operator|(ulong2 a, const ulong2& b) { return a |= b; }
__HIP_REMOTE_VFN ulong2 operator|(ulong2 a, unsigned long b) { return a |= b; }
__HIP_REMOTE_VFN ulong2 operator|(unsigned long a, const ulong2& b) { ulong2 r; r.x = (unsigned long)(a | b.x); r.y = (unsigned long)(a | b.y); return r; }
__HIP_REMOTE_VFN ulong2& operator^=(ulong2& a, const ulong2& b) { a.x ^= b.x; a.y ^= b.y; return a; }
__HIP_REMOTE_VFN ulong2& operator^=(ulong2& a, unsigned long b) { a.x ^= b; a.y ^= b; return a; }
__HIP_REMOTE_VFN ulong2 operator^(ulong2 a, const ulong2& b) { return a ^= b; }
__HIP_REMOTE_VFN ulong2 operator^(ulong2 a, unsigned long b) { return a ^= b; }
__HIP_REMOTE_VFN ulong2 operator^(unsigned long a, const ulong2& b) { ulong2 r; r.x = (unsigned long)(a ^ b.x); r.y = (unsigned long)(a ^ b.y); return r; }
__HIP_REMOTE_VFN ulong2& operator<<=(ulong2& a, const ulong2& b) { a.x <<= b.x; a.y <<= b.y; return a; }
__HIP_REMOTE_VFN ulong2& operator<<=(ulong2& a, unsigned long b) { a.x <<= b; a.y <<= b; return a; }
__HIP_REMOTE_VFN ulong2 operator<<(ulong2 a, const ulong2& b) { return a <<= b; }
__HIP_REMOTE_VFN ulong2 operator<<(ulong2 a, unsigned long b) { return a <<= b; }
__HIP_REMOTE_VFN ulong2 operator<<(unsigned long a, const ulong2& b) { ulong2 r; r.x = (unsigned long)(a << b.x); r.y = (unsigned long)(a << b.y); return r; }
__HIP_REMOTE_VFN ulong2& operator>>=(ulong2& a, const ulong2& b) { a.x >>= b.x; a.y >>= b.y; return a; }
__HIP_REMOTE_VFN ulong2& operator>>=(ulong2& a, unsigned long b) { a.x >>= b; a.y >>= b; return a; }
__HIP_REMOTE_VFN ulong2 operator>>(ulong2 a, const ulong2& b) { return a >>= b; }
__HIP_REMOTE_VFN ulong2 operator>>(ulong2 a, unsigned long b) { return a >>= b; }
__HIP_REMOTE_VFN ulong2 operator>>(unsigned long a, const ulong2& b) { ulong2 r; r.x = (unsigned long)(a >> b.x); r.y = (unsigned long)(a >> b.y); return r; }
__HIP_REMOTE_VFN ulong2 operator-(const ulong2& a) { ulong2 r; r.x = (unsigned long)-a.x; r.y = (unsigned long)-a.y; return r; }
__HIP_REMOTE_VFN ulong2 operator+(const ulong2& a) { return a; }
__HIP_REMOTE_VFN ulong2 operator~(const ulong2& a) { ulong2 r; r.x = (unsigned long)~a.x; r.y = (unsigned long)~a.y; return r; }
__HIP_REMOTE_VFN bool operator==(const ulong2& a, const ulong2& b) { return a.x == b.x && a.y == b.y; }
__HIP_REMOTE_VFN bool operator!=(const ulong2& a, const ulong2& b) { return !(a == b); }
/* ulong3 */
__HIP_REMOTE_VFN ulong3& operator+=(ulong3& a, const ulong3& b) { a.x += b.x; a.y += b.y; a.z += b.z; return a; }
__HIP_REMOTE_VFN ulong3& operator+=(ulong3& a, unsigned long b) { a.x += b; a.y += b; a.z += b; return a; }
__HIP_REMOTE_VFN ulong3 operator+(ulong3 a, const ulong3& b) { return a += b; }
__HIP_REMOTE_VFN ulong3 operator+(ulong3 a, unsigned long b) { return a += b; }
__HIP_REMOTE_VFN ulong3 operator+(unsigned long a, const ulong3& b) { ulong3 r; r.x = (unsigned long)(a + b.x); r.y = (unsigned long)(a + b.y); r.z = (unsigned long)(a + b.z); return r; }
__HIP_REMOTE_VFN ulong3& operator-=(ulong3& a, const ulong3& b) { a.x -= b.x; a.y -= b.y; a.z -= b.z; return a; }
__HIP_REMOTE_VFN ulong3& operator-=(ulong3& a, unsigned long b) { a.x -= b; a.y -= b; a.z -= b; return a; }
__HIP_REMOTE_VFN ulong3 operator-(ulong3 a, const ulong3& b) { return a -= b; }
__HIP_REMOTE_VFN ulong3 operator-(ulong3 a, unsigned long b) { return a -= b; }
__HIP_REMOTE_VFN ulong3 operator-(unsigned long a, const ulong3& b) { ulong3 r; r.x = (unsigned long)(a - b.x); r.y = (unsigned long)(a - b.y); r.z = (unsigned long)(a - b.z); return r; }
__HIP_REMOTE_VFN ulong3& operator*=(ulong3& a, const ulong3& b) { a.x *= b.x; a.y *= b.y; a.z *= b.z; return a; }
__HIP_REMOTE_VFN ulong3& operator*=(ulong3& a, unsigned long b) { a.x *= b; a.y *= b; a.z *= b; return a; }
__HIP_REMOTE_VFN ulong3 operator*(ulong3 a, const ulong3& b) { return a *= b; }
__HIP_REMOTE_VFN ulong3 operator*(ulong3 a, unsigned long b) { return a *= b; }
__HIP_REMOTE_VFN ulong3 operator*(unsigned long a, const ulong3& b) { ulong3 r; r.x = (unsigned long)(a * b.x); r.y = (unsigned long)(a * b.y); r.z = (unsigned long)(a * b.z); return r; }
__HIP_REMOTE_VFN ulong3& operator/=(ulong3& a, const ulong3& b) { a.x /= b.x; a.y /= b.y; a.z /= b.z; return a; }
__HIP_REMOTE_VFN ulong3& operator/=(ulong3& a, unsigned long b) { a.x /= b; a.y /= b; a.z /= b; return a; }
__HIP_REMOTE_VFN ulong3 operator/(ulong3 a, const ulong3& b) { return a /= b; }
__HIP_REMOTE_VFN ulong3 operator/(ulong3 a, unsigned long b) { return a /= b; }
__HIP_REMOTE_VFN ulong3 operator/(unsigned long a, const ulong3& b) { ulong3 r; r.x = (unsigned long)(a / b.x); r.y = (unsigned long)(a / b.y); r.z = (unsigned long)(a / b.z); return r; }
__HIP_REMOTE_VFN ulong3& operator%=(ulong3& a, const ulong3& b) { a.x %= b.x; a.y %= b.y; a.z %= b.z; return a; }
__HIP_REMOTE_VFN ulong3& operator%=(ulong3& a, unsigned long b) { a.x %= b; a.y %= b; a.z %= b; return a; }
__HIP_REMOTE_VFN ulong3 operator%(ulong3 a, const ulong3& b) { return a %= b; }
__HIP_REMOTE_VFN ulong3 operator%(ulong3 a, unsigned long b) { return a %= b; }
__HIP_REMOTE_VFN ulong3 operator%(unsigned long a, const ulong3& b) { ulong3 r; r.x = (unsigned long)(a % b.x); r.y = (unsigned long)(a % b.y); r.z = (unsigned long)(a % b.z); return r; }
__HIP_REMOTE_VFN ulong3& operator&=(ulong3& a, const ulong3& b) { a.x &= b.x; a.y &= b.y; a.z &= b.z; return a; }
__HIP_REMOTE_VFN ulong3& operator&=(ulong3& a, unsigned long b) { a.x &= b; a.y &= b; a.z &= b; return a; }
__HIP_REMOTE_VFN ulong3 operator&(ulong3 a, const ulong3& b) { return a &= b; }
__HIP_REMOTE_VFN ulong3 operator&(ulong3 a, unsigned long b) { return a &= b; }
__HIP_REMOTE_VFN ulong3 operator&(unsigned long a, const ulong3& b) { ulong3 r; r.x = (unsigned long)(a & b.x); r.y = (unsigned long)(a & b.y); r.z = (unsigned long)(a & b.z); return r; }
__HIP_REMOTE_VFN ulong3& operator|=(ulong3& a, const ulong3& b) { a.x |= b.x; a.y |= b.y; a.z |= b.z; return a; }
__HIP_REMOTE_VFN ulong3& operator|=(ulong3& a, unsigned long b) { a.x |= b; a.y |= b; a.z |= b; return a; }
__HIP_REMOTE_VFN ulong3 operator|(ulong3 a, const ulong3& b) { return a |= b; }
__HIP_REMOTE_VFN ulong3 operator|(ulong3 a, unsigned long b) { return a |= b; }
__HIP_REMOTE_VFN ulong3 operator|(unsigned long a, const ulong3& b) { ulong3 r; r.x = (unsigned long)(a | b.x); r.y = (unsigned long)(a | b.y); r.z = (unsigned long)(a | b.z); return r; }
__HIP_REMOTE_VFN ulong3& operator^=(ulong3& a, const ulong3& b) { a.x ^= b.x; a.y ^= b.y; a.z ^= b.z; return a; }
__HIP_REMOTE_VFN ulong3& operator^=(ulong3& a, unsigned long b) { a.x ^= b; a.y ^= b; a.z ^= b; return a; }
__HIP_REMOTE_VFN ulong3 operator^(ulong3 a, const ulong3& b) { return a ^= b; }
__HIP_REMOTE_VFN ulong3 operator^(ulong3 a, unsigned long b) { return a ^= b; }
__HIP_REMOTE_VFN ulong3 operator^(unsigned long a, const ulong3& b) { ulong3 r; r.x = (unsigned long)(a ^ b.x); r.y = (unsigned long)(a ^ b.y); r.z = (unsigned long)(a ^ b.z); return r; }
__HIP_REMOTE_VFN ulong3& operator<<=(ulong3& a, const ulong3& b) { a.x <<= b.x; a.y <<= b.y; a.z <<= b.z; return a; }
__HIP_REMOTE_VFN ulong3& operator<<=(ulong3& a, unsigned long b) { a.x <<= b; a.y <<= b; a.z <<= b; return a; }
__HIP_REMOTE_VFN ulong3 operator<<(ulong3 a, const ulong3& b) { return a <<= b; }
__HIP_REMOTE_VFN ulong3 operator<<(ulong3 a, unsigned long b) { return a <<= b; }
__HIP_REMOTE_VFN ulong3 operator<<(unsigned long a, const ulong3& b) { ulong3 r; r.x = (unsigned long)(a << b.x); r.y = (unsigned long)(a << b.y); r.z = (unsigned long)(a << b.z); return r; }
__HIP_REMOTE_VFN ulong3& operator>>=(ulong3& a, const ulong3& b) { a.x >>= b.x; a.y >>= b.y; a.z >>= b.z; return a; }
__HIP_REMOTE_VFN ulong3& operator>>=(ulong3& a, unsigned long b) { a.x >>= b; a.y >>= b; a.z >>= b; return a; }
__HIP_REMOTE_VFN ulong3 operator>>(ulong3 a, const ulong3& b) { return a >>= b; }
__HIP_REMOTE_VFN ulong3 operator>>(ulong3 a, unsigned long b) { return a >>= b; }
__HIP_REMOTE_VFN ulong3 operator>>(unsigned long a, const ulong3& b) { ulong3 r; r.x = (unsigned long)(a >> b.x); r.y = (unsigned long)(a >> b.y); r.z = (unsigned long)(a >> b.z); return r; }
__HIP_REMOTE_VFN ulong3 operator-(const ulong3& a) { ulong3 r; r.x = (unsigned long)-a.x; r.y = (unsigned long)-a.y; r.z = (unsigned long)-a.z; return r; }
__HIP_REMOTE_VFN ulong3 operator+(const ulong3& a) { return a; }
__HIP_REMOTE_VFN ulong3 operator~(const ulong3& a) { ulong3 r; r.x = (unsigned long)~a.x; r.y = (unsigned long)~a.y; r.z = (unsigned long)~a.z; return r; }
__HIP_REMOTE_VFN bool operator==(const ulong3& a, const ulong3& b) { return a.x == b.x && a.y == b.y && a.z == b.z; }
__HIP_REMOTE_VFN bool operator!=(const ulong3& a, const ulong3& b) { return !(a == b); }
/* ulong4 */
__HIP_REMOTE_VFN ulong4& operator+=(ulong4& a, const ulong4& b) { a.x += b.x; a.y += b.y; a.z += b.z; a.w += b.w; return a; }
__HIP_REMOTE_VFN ulong4& operator+=(ulong4& a, unsigned long b) { a.x += b; a.y += b; a.z += b; a.w += b; return a; }
__HIP_REMOTE_VFN ulong4 operator+(ulong4 a, const ulong4& b) { return a += b; }
__HIP_REMOTE_VFN ulong4 operator+(ulong4 a, unsigned long b) { return a += b; }
__HIP_REMOTE_VFN ulong4 operator+(unsigned long a, const ulong4& b) { ulong4 r; r.x = (unsigned long)(a + b.x); r.y = (unsigned long)(a + b.y); r.z = (unsigned long)(a + b.z); r.w = (unsigned long)(a + b.w); return r; }
__HIP_REMOTE_VFN ulong4& operator-=(ulong4& a, const ulong4& b) { a.x -= b.x; a.y -= b.y; a.z -= b.z; a.w -= b.w; return a; }
__HIP_REMOTE_VFN ulong4& operator-=(ulong4& a, unsigned long b) { a.x -= b; a.y -= b; a.z -= b; a.w -= b; return a; }
__HIP_REMOTE_VFN ulong4 operator-(ulong4 a, const ulong4& b) { return a -= b; }
__HIP_REMOTE_VFN ulong4 operator-(ulong4 a, unsigned long b) { return a -= b; }
__HIP_REMOTE_VFN ulong4 operator-(unsigned long a, const ulong4& b) { ulong4 r; r.x = (unsigned long)(a - b.x); r.y = (unsigned long)(a - b.y); r.z = (unsigned long)(a - b.z); r.w = (unsigned long)(a - b.w); return r; }
__HIP_REMOTE_VFN ulong4& operator*=(ulong4& a, const ulong4& b) { a.x *= b.x; a.y *= b.y; a.z *= b.z; a.w *= b.w; return a; }
__HIP_REMOTE_VFN ulong4& operator*=(ulong4& a, unsigned long b) { a.x *= b; a.y *= b; a.z *= b; a.w *= b; return a; }
__HIP_REMOTE_VFN ulong4 operator*(ulong4 a, const ulong4& b) { return a *= b; }
__HIP_REMOTE_VFN ulong4 operator*(ulong4 a, unsigned long b) { return a *= b; }
__HIP_REMOTE_VFN ulong4 operator*(unsigned long a, const ulong4& b) { ulong4 r; r.x = (unsigned long)(a * b.x); r.y = (unsigned long)(a * b.y); r.z = (unsigned long)(a * b.z); r.w = (unsigned long)(a * b.w); return r; }
__HIP_REMOTE_VFN ulong4& operator/=(ulong4& a, const ulong4& b) { a.x /= b.x; a.y /= b.y; a.z /= b.z; a.w /= b.w; return a; }
__HIP_REMOTE_VFN ulong4& operator/=(ulong4& a, unsigned long b) { a.x /= b; a.y /= b; a.z /= b; a.w /= b; return a; }
__HIP_REMOTE_VFN ulong4 operator/(ulong4 a, const ulong4& b) { return a /= b; }
__HIP_REMOTE_VFN ulong4 operator/(ulong4 a, unsigned long b) { return a /= b; }
__HIP_REMOTE_VFN ulong4 operator/(unsigned long a, const ulong4& b) { ulong4 r; r.x = (unsigned long)(a / b.x); r.y = (unsigned long)(a / b.y); r.z = (unsigned long)(a / b.z); r.w = (unsigned long)(a / b.w); return r; }
__HIP_REMOTE_VFN ulong4& operator%=(ulong4& a, const ulong4& b) { a.x %= b.x; a.y %= b.y; a.z %= b.z; a.w %= b.w; return a; }
__HIP_REMOTE_VFN ulong4& operator%=(ulong4& a, unsigned long b) { a.x %= b; a.y %= b; a.z %= b; a.w %= b; return a; }
__HIP_REMOTE_VFN ulong4 operator%(ulong4 a, const ulong4& b) { return a %= b; }
__HIP_REMOTE_VFN ulong4 operator%(ulong4 a, unsigned long b) { return a %= b; }
__HIP_REMOTE_VFN ulong4 operator%(unsigned long a, const ulong4& b) { ulong4 r; r.x = (unsigned long)(a % b.x); r.y = (unsigned long)(a % b.y); r.z = (unsigned long)(a % b.z); r.w = (unsigned long)(a % b.w); return r; }
__HIP_REMOTE_VFN ulong4& operator&=(ulong4& a, const ulong4& b) { a.x &= b.x; a.y &= b.y; a.z &= b.z; a.w &= b.w; return a; }
__HIP_REMOTE_VFN ulong4& operator&=(ulong4& a, unsigned long b) { a.x &= b; a.y &= b; a.z &= b; a.w &= b; return a; }
__HIP_REMOTE_VFN ulong4 operator&(ulong4 a, const ulong4& b) { return a &= b; }
__HIP_REMOTE_VFN ulong4 operator&(ulong4 a, unsigned long b) { return a &= b; }
__HIP_REMOTE_VFN ulong4 operator&(unsigned long a, const ulong4& b) { ulong4 r; r.x = (unsigned long)(a & b.x); r.y = (unsigned long)(a & b.y); r.z = (unsigned long)(a & b.z); r.w = (unsigned long)(a & b.w); return r; }
__HIP_REMOTE_VFN ulong4& operator|=(ulong4& a, const ulong4& b) { a.x |= b.x; a.y |= b.y; a.z |= b.z; a.w |= b.w; return a; }
__HIP_REMOTE_VFN ulong4& operator|=(ulong4& a, unsigned long b) { a.x |= b; a.y |= b; a.z |= b; a.w |= b; return a; }
__HIP_REMOTE_VFN ulong4 operator|(ulong4 a, const ulong4& b) { return a |= b; }
__HIP_REMOTE_VFN ulong4 operator|(ulong4 a, unsigned long b) { return a |= b; }
__HIP_REMOTE_VFN ulong4 operator|(unsigned long a, const ulong4& b) { ulong4 r; r.x = (unsigned long)(a | b.x); r.y = (unsigned long)(a | b.y); r.z = (unsigned long)(a | b.z); r.w = (unsigned long)(a | b.w); return r; }
__HIP_REMOTE_VFN ulong4& operator^=(ulong4& a, const ulong4& b) { a.x ^= b.x; a.y ^= b.y; a.z ^= b.z; a.w ^= b.w; return a; }
__HIP_REMOTE_VFN ulong4& operator^=(ulong4& a, unsigned long b) { a.x ^= b; a.y ^= b; a.z ^= b; a.w ^= b; return a; }
__HIP_REMOTE_VFN ulong4 operator^(ulong4 a, const ulong4& b) { return a ^= b; }
__HIP_REMOTE_VFN ulong4 operator^(ulong4 a, unsigned long b) { return a ^= b; }
__HIP_REMOTE_VFN ulong4 operator^(unsigned long a, const ulong4& b) { ulong4 r; r.x = (unsigned long)(a ^ b.x); r.y = (unsigned long)(a ^ b.y); r.z = (unsigned long)(a ^ b.z); r.w = (unsigned long)(a ^ b.w); return r; }
__HIP_REMOTE_VFN ulong4& operator<<=(ulong4& a, const ulong4& b) { a.x <<= b.x; a.y <<= b.y; a.z <<= b.z; a.w <<= b.w; return a; }
__HIP_REMOTE_VFN ulong4& operator<<=(ulong4& a, unsigned long b) { a.x <<= b; a.y <<= b; a.z <<= b; a.w <<= b; return a; }
__HIP_REMOTE_VFN ulong4 operator<<(ulong4 a, const ulong4& b) { return a <<= b; }
__HIP_REMOTE_VFN ulong4 operator<<(ulong4 a, unsigned long b) { return a <<= b; }
__HIP_REMOTE_VFN ulong4 operator<<(unsigned long a, const ulong4& b) { ulong4 r; r.x = (unsigned long)(a << b.x); r.y = (unsigned long)(a << b.y); r.z = (unsigned long)(a << b.z); r.w = (unsigned long)(a << b.w); return r; }
__HIP_REMOTE_VFN ulong4& operator>>=(ulong4& a, const ulong4& b) { a.x >>= b.x; a.y >>= b.y; a.z >>= b.z; a.w >>= b.w; return a; }
__HIP_REMOTE_VFN ulong4& operator>>=(ulong4& a, unsigned long b) { a.x >>= b; a.y >>= b; a.z >>= b; a.w >>= b; return a; }
__HIP_REMOTE_VFN ulong4 operator>>(ulong4 a, const ulong4& b) { return a >>= b; }
__HIP_REMOTE_VFN ulong4 operator>>(ulong4 a, unsigned long b) { return a >>= b; }
__HIP_REMOTE_VFN ulong4 operator>>(unsigned long a, const ulong4& b) { ulong4 r; r.x = (unsigned long)(a >> b.x); r.y = (unsigned long)(a >> b.y); r.z = (unsigned long)(a >> b.z); r.w = (unsigned long)(a >> b.w); return r; }
__HIP_REMOTE_VFN ulong4 operator-(const ulong4& a) { ulong4 r; r.x = (unsigned long)-a.x; r.y = (unsigned long)-a.y; r.z = (unsigned long)-a.z; r.w = (unsigned long)-a.w; return r; }
__HIP_REMOTE_VFN ulong4 operator+(const ulong4& a) { return a; }
__HIP_REMOTE_VFN ulong4 operator~(const ulong4& a) { ulong4 r; r.x = (unsigned long)~a.x; r.y = (unsigned long)~a.y; r.z = (unsigned long)~a.z; r.w = (unsigned long)~a.w; return r; }
__HIP_REMOTE_VFN bool operator==(const ulong4& a, const ulong4& b) { return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w; }
__HIP_REMOTE_VFN bool operator!=(const ulong4& a, const ulong4& b) { return !(a == b); }
/* longlong1 */
__HIP_REMOTE_VFN longlong1& operator+=(longlong1& a, const longlong1& b) { a.x += b.x; return a; }
__HIP_REMOTE_VFN longlong1& operator+=(longlong1& a, long long b) { a.x += b; return a; }
__HIP_REMOTE_VFN longlong1 operator+(longlong1 a, const longlong1& b) { return a += b; }
__HIP_REMOTE_VFN longlong1 operator+(longlong1 a, long long b) { return a += b; }
__HIP_REMOTE_VFN longlong1 operator+(long long a, const longlong1& b) { longlong1 r; r.x = (long long)(a + b.x); return r; }
__HIP_REMOTE_VFN longlong1& operator-=(longlong1& a, const longlong1& b) { a.x -= b.x; return a; }
__HIP_REMOTE_VFN longlong1& operator-=(longlong1& a, long long b) { a.x -= b; return a; }
__HIP_REMOTE_VFN longlong1 operator-(longlong1 a, const longlong1& b) { return a -= b; }
__HIP_REMOTE_VFN longlong1 operator-(longlong1 a, long long b) { return a -= b; }
__HIP_REMOTE_VFN longlong1 operator-(long long a, const longlong1& b) { longlong1 r; r.x = (long long)(a - b.x); return r; }
__HIP_REMOTE_VFN longlong1& operator*=(longlong1& a, const longlong1& b) { a.x *= b.x; return a; }
__HIP_REMOTE_VFN longlong1& operator*=(longlong1& a, long long b) { a.x *= b; return a; }
__HIP_REMOTE_VFN longlong1 operator*(longlong1 a, const longlong1& b) { return a *= b; }
__HIP_REMOTE_VFN longlong1 operator*(longlong1 a, long long b) { return a *= b; }
__HIP_REMOTE_VFN longlong1 operator*(long long a, const longlong1& b) { longlong1 r; r.x = (long long)(a * b.x); return r; }
__HIP_REMOTE_VFN longlong1& operator/=(longlong1& a, const longlong1& b) { a.x /= b.x; return a; }
__HIP_REMOTE_VFN longlong1& operator/=(longlong1& a, long long b) { a.x /= b; return a; }
__HIP_REMOTE_VFN longlong1 operator/(longlong1 a, const longlong1& b) { return a /= b; }
__HIP_REMOTE_VFN longlong1 operator/(longlong1 a, long long b) { return a /= b; }
__HIP_REMOTE_VFN longlong1 operator/(long long a, const longlong1& b) { longlong1 r; r.x = (long long)(a / b.x); return r; }
__HIP_REMOTE_VFN longlong1& operator%=(longlong1& a, const longlong1& b) { a.x %= b.x; return a; }
__HIP_REMOTE_VFN longlong1& operator%=(longlong1& a, long long b) { a.x %= b; return a; }
__HIP_REMOTE_VFN longlong1 operator%(longlong1 a, const longlong1& b) { return a %= b; }
__HIP_REMOTE_VFN longlong1 operator%(longlong1 a, long long b) { return a %= b; }
__HIP_REMOTE_VFN longlong1 operator%(long long a, const longlong1& b) { longlong1 r; r.x = (long long)(a % b.x); return r; }
__HIP_REMOTE_VFN longlong1& operator&=(longlong1& a, const longlong1& b) { a.x &= b.x; return a; }
__HIP_REMOTE_VFN longlong1& operator&=(longlong1& a, long long b) { a.x &= b; return a; }
__HIP_REMOTE_VFN longlong1 operator&(longlong1 a, const longlong1& b) { return a &= b; }
__HIP_REMOTE_VFN longlong1 operator&(longlong1 a, long long b) { return a &= b; }
__HIP_REMOTE_VFN longlong1 operator&(long long a, const longlong1& b) { longlong1 r; r.x = (long long)(a & b.x); return r; }
__HIP_REMOTE_VFN longlong1& operator|=(longlong1& a, const longlong1& b) { a.x |= b.x; return a; }
__HIP_REMOTE_VFN longlong1& operator|=(longlong1& a, long long b) { a.x |= b; return a; }
__HIP_REMOTE_VFN longlong1 operator|(longlong1 a, const longlong1& b) { return a |= b; }
__HIP_REMOTE_VFN longlong1 operator|(longlong1 a, long long b) { return a |= b; }
__HIP_REMOTE_VFN longlong1 operator|(long long a, const longlong1& b) { longlong1 r; r.x = (long long)(a | b.x); return r; }
__HIP_REMOTE_VFN longlong1& operator^=(longlong1& a, const longlong1& b) { a.x ^= b.x; return a; }
__HIP_REMOTE_VFN longlong1& operator^=(longlong1& a, long long b) { a.x ^= b; return a; }
__HIP_REMOTE_VFN longlong1 operator^(longlong1 a, const longlong1& b) { return a ^= b; }
__HIP_REMOTE_VFN longlong1 operator^(longlong1 a, long long b) { return a ^= b; }
__HIP_REMOTE_VFN longlong1 operator^(long long a, const longlong1& b) { longlong1 r; r.x = (long long)(a ^ b.x); return r; }
__HIP_REMOTE_VFN longlong1& operator<<=(longlong1& a, const longlong1& b) { a.x <<= b.x; return a; }
__HIP_REMOTE_VFN longlong1& operator<<=(longlong1& a, long long b) { a.x <<= b; return a; }
__HIP_REMOTE_VFN longlong1 operator<<(longlong1 a, const longlong1& b) { return a <<= b; }
__HIP_REMOTE_VFN longlong1 operator<<(longlong1 a, long long b) { return a <<= b; }
__HIP_REMOTE_VFN longlong1 operator<<(long long a, const longlong1& b) { longlong1 r; r.x = (long long)(a << b.x); return r; }
__HIP_REMOTE_VFN longlong1& operator>>=(longlong1& a, const longlong1& b) { a.x >>= b.x; return a; }
__HIP_REMOTE_VFN longlong1& operator>>=(longlong1& a, long long b) { a.x >>= b; return a; }
__HIP_REMOTE_VFN longlong1 operator>>(longlong1 a, const longlong1& b) { return a >>= b; }
__HIP_REMOTE_VFN longlong1 operator>>(longlong1 a, long long b) { return a >>= b; }
__HIP_REMOTE_VFN longlong1 operator>>(long long a, const longlong1& b) { longlong1 r; r.x = (long long)(a >> b.x); return r; }
__HIP_REMOTE_VFN longlong1 operator-(const longlong1& a) { longlong1 r; r.x = (long long)-a.x; return r; }
__HIP_REMOTE_VFN longlong1 operator+(const longlong1& a) { return a; }
__HIP_REMOTE_VFN longlong1 operator~(const longlong1& a) { longlong1 r; r.x = (long long)~a.x; return r; }
__HIP_REMOTE_VFN bool operator==(const longlong1& a, const longlong1& b) { return a.x == b.x; }
__HIP_REMOTE_VFN bool operator!=(const longlong1& a, const longlong1& b) { return !(a == b); }
/* longlong2 */
__HIP_REMOTE_VFN longlong2& operator+=(longlong2& a, const longlong2& b) { a.x += b.x; a.y += b.y; return a; }
__HIP_REMOTE_VFN longlong2& operator+=(longlong2& a, long long b) { a.x += b; a.y += b; return a; }
__HIP_REMOTE_VFN longlong2 operator+(longlong2 a, const longlong2& b) { return a += b; }
__HIP_REMOTE_VFN longlong2 operator+(longlong2 a, long long b) { return a += b; }
__HIP_REMOTE_VFN longlong2 operator+(long long a, const longlong2& b) { longlong2 r; r.x = (long long)(a + b.x); r.y = (long long)(a + b.y); return r; }
__HIP_REMOTE_VFN longlong2& operator-=(longlong2& a, const longlong2& b) { a.x -= b.x; a.y -= b.y; return a; }
__HIP_REMOTE_VFN longlong2& operator-=(longlong2& a, long long b) { a.x -= b; a.y -= b; return a; }
__HIP_REMOTE_VFN longlong2 operator-(longlong2 a, const longlong2& b) { return a -= b; }
__HIP_REMOTE_VFN longlong2 operator-(longlong2 a, long long b) { return a -= b; }
__HIP_REMOTE_VFN longlong2 operator-(long long a, const longlong2& b) { longlong2 r; r.x = (long long)(a - b.x); r.y = (long long)(a - b.y); return r; }
__HIP_REMOTE_VFN longlong2& operator*=(longlong2& a, const longlong2& b) { a.x *= b.x; a.y *= b.y; return a; }
__HIP_REMOTE_VFN longlong2& operator*=(longlong2& a, long long b) { a.x *= b; a.y *= b; return a; }
__HIP_REMOTE_VFN longlong2 operator*(longlong2 a, const longlong2& b) { return a *= b; }
__HIP_REMOTE_VFN longlong2 operator*(longlong2 a, long long b) { return a *= b; }
__HIP_REMOTE_VFN longlong2 operator*(long long a, const longlong2& b) { longlong2 r; r.x = (long long)(a * b.x); r.y = (long long)(a * b.y); return r; }
__HIP_REMOTE_VFN longlong2& operator/=(longlong2& a, const longlong2& b) { a.x /= b.x; a.y /= b.y; return a; }
__HIP_REMOTE_VFN longlong2& operator/=(longlong2& a, long long b) { a.x /= b; a.y /= b; return a; }
__HIP_REMOTE_VFN longlong2 operator/(longlong2 a, const longlong2& b) { return a /= b; }
__HIP_REMOTE_VFN longlong2 operator/(longlong2 a, long long b) { return a /= b; }
__HIP_REMOTE_VFN longlong2 operator/(long long a, const longlong2& b) { longlong2 r; r.x = (long long)(a / b.x); r.y = (long long)(a / b.y); return r; }
__HIP_REMOTE_VFN longlong2& operator%=(longlong2& a, const longlong2& b) { a.x %= b.x; a.y %= b.y; return a; }
__HIP_REMOTE_VFN longlong2& operator%=(longlong2& a, long long b) { a.x %= b; a.y %= b; return a; }
__HIP_REMOTE_VFN longlong2 operator%(longlong2 a, const longlong2& b) { return a %= b; }
__HIP_REMOTE_VFN longlong2 operator%(longlong2 a, long long b) { return a %= b; }
__HIP_REMOTE_VFN longlong2 operator%(long long a, const longlong2& b) { longlong2 r; r.x = (long long)(a % b.x); r.y = (long long)(a % b.y); return r; }
__HIP_REMOTE_VFN longlong2& operator&=(longlong2& a, const longlong2& b) { a.x &= b.x; a.y &= b.y; return a; }
__HIP_REMOTE_VFN longlong2& operator&=(longlong2& a, long long b) { a.x &= b; a.y &= b; return a; }
__HIP_REMOTE_VFN longlong2 operator&(longlong2 a, const longlong2& b) { return a &= b; }
__HIP_REMOTE_VFN longlong2 operator&(longlong2 a, long long b) { return a &= b; }
__HIP_REMOTE_VFN longlong2 operator&(long long a, const longlong2& b) { longlong2 r; r.x = (long long)(a & b.x); r.y = (long long)(a & b.y); return r; }
__HIP_REMOTE_VFN longlong2& operator|=(longlong2& a, const longlong2& b) { a.x |= b.x; a.y |= b.y; return a; }
__HIP_REMOTE_VFN longlong2& operator|=(longlong2& a, long long b) { a.x |= b; a.y |= b; return a; }
__HIP_REMOTE_VFN longlong2 operator|(longlong2 a, const longlong2& b) { return a |= b; }
__HIP_REMOTE_VFN longlong2 operator|(longlong2 a, long long b) { return a |= b; }
__HIP_REMOTE_VFN longlong2 operator|(long long a, const longlong2& b) { longlong2 r; r.x = (long long)(a | b.x); r.y = (long long)(a | b.y); return r; }
__HIP_REMOTE_VFN longlong2& operator^=(longlong2& a, const longlong2& b) { a.x ^= b.x; a.y ^= b.y; return a; }
__HIP_REMOTE_VFN longlong2& operator^=(longlong2& a, long long b) { a.x ^= b; a.y ^= b; return a; }
__HIP_REMOTE_VFN longlong2 operator^(longlong2 a, const longlong2& b) { return a ^= b; }
__HIP_REMOTE_VFN longlong2 operator^(longlong2 a, long long b) { return a ^= b; }
__HIP_REMOTE_VFN longlong2 operator^(long long a, const longlong2& b) { longlong2 r; r.x = (long long)(a ^ b.x); r.y = (long long)(a ^ b.y); return r; }
__HIP_REMOTE_VFN longlong2& operator<<=(longlong2& a, const longlong2& b) { a.x <<= b.x; a.y <<= b.y; return a; }
__HIP_REMOTE_VFN longlong2& operator<<=(longlong2& a, long long b) { a.x <<= b; a.y <<= b; return a; }
__HIP_REMOTE_VFN longlong2 operator<<(longlong2 a, const longlong2& b) { return a <<= b; }
__HIP_REMOTE_VFN longlong2 operator<<(longlong2 a, long long b) { return a <<= b; }
__HIP_REMOTE_VFN longlong2 operator<<(long long a, const longlong2& b) { longlong2 r; r.x = (long long)(a << b.x); r.y = (long long)(a << b.y); return r; }
__HIP_REMOTE_VFN longlong2& operator>>=(longlong2& a, const longlong2& b) { a.x >>= b.x; a.y >>= b.y; return a; }
__HIP_REMOTE_VFN longlong2& operator>>=(longlong2& a, long long b) { a.x >>= b; a.y >>= b; return a; }
__HIP_REMOTE_VFN longlong2 operator>>(longlong2 a, const longlong2& b) { return a >>= b; }
__HIP_REMOTE_VFN longlong2 operator>>(longlong2 a, long long b) { return a >>= b; }
__HIP_REMOTE_VFN longlong2 operator>>(long long a, const longlong2& b) { longlong2 r; r.x = (long long)(a >> b.x); r.y = (long long)(a >> b.y); return r; }
__HIP_REMOTE_VFN longlong2 operator-(const longlong2& a) { longlong2 r; r.x = (long long)-a.x; r.y = (long long)-a.y; return r; }
__HIP_REMOTE_VFN longlong2 operator+(const longlong2& a) { return a; }
__HIP_REMOTE_VFN longlong2 operator~(const longlong2& a) { longlong2 r; r.x = (long long)~a.x; r.y = (long long)~a.y; return r; }
__HIP_REMOTE_VFN bool operator==(const longlong2& a, const longlong2& b) { return a.x == b.x && a.y == b.y; }
__HIP_REMOTE_VFN bool operator!=(const longlong2& a, const longlong2& b) { return !(a == b); }
/* longlong3 */
__HIP_REMOTE_VFN longlong3& operator+=(longlong3& a, const longlong3& b) { a.x += b.x; a.y += b.y; a.z += b.z; return a; }
__HIP_REMOTE_VFN longlong3& operator+=(longlong3& a, long long b) { a.x += b; a.y += b; a.z += b; return a; }
__HIP_REMOTE_VFN longlong3 operator+(longlong3 a, const longlong3& b) { return a += b; }
__HIP_REMOTE_VFN longlong3 operator+(longlong3 a, long long b) { return a += b; }
__HIP_REMOTE_VFN longlong3 operator+(long long a, const longlong3& b) { longlong3 r; r.x = (long long)(a + b.x); r.y = (long long)(a + b.y); r.z = (long long)(a + b.z); return r; }
__HIP_REMOTE_VFN longlong3& operator-=(longlong3& a, const longlong3& b) { a.x -= b.x; a.y -= b.y; a.z -= b.z; return a; }
__HIP_REMOTE_VFN longlong3& operator-=(longlong3& a, long long b) { a.x -= b; a.y -= b; a.z -= b; return a; }
__HIP_REMOTE_VFN longlong3 operator-(longlong3 a, const longlong3& b) { return a -= b; }
__HIP_REMOTE_VFN longlong3 operator-(longlong3 a, long long b) { return a -= b; }
__HIP_REMOTE_VFN longlong3 operator-(long long a, const longlong3& b) { longlong3 r; r.x = (long long)(a - b.x); r.y = (long long)(a - b.y); r.z = (long long)(a - b.z); return r; }
__HIP_REMOTE_VFN longlong3& operator*=(longlong3& a, const longlong3& b) { a.x *= b.x; a.y *= b.y; a.z *= b.z; return a; }
__HIP_REMOTE_VFN longlong3& operator*=(longlong3& a, long long b) { a.x *= b; a.y *= b; a.z *= b; return a; }
__HIP_REMOTE_VFN longlong3 operator*(longlong3 a, const longlong3& b) { return a *= b; }
__HIP_REMOTE_VFN longlong3 operator*(longlong3 a, long long b) { return a *= b; }
__HIP_REMOTE_VFN longlong3 operator*(long long a, const longlong3& b) { longlong3 r; r.x = (long long)(a * b.x); r.y = (long long)(a * b.y); r.z = (long long)(a * b.z); return r; }
__HIP_REMOTE_VFN longlong3& operator/=(longlong3& a, const longlong3& b) { a.x /= b.x; a.y /= b.y; a.z /= b.z; return a; }
__HIP_REMOTE_VFN longlong3& operator/=(longlong3& a, long long b) { a.x /= b; a.y /= b; a.z /= b; return a; }
__HIP_REMOTE_VFN longlong3 operator/(longlong3 a, const longlong3& b) { return a /= b; }
__HIP_REMOTE_VFN longlong3 operator/(longlong3 a, long long b) { return a /= b; }
__HIP_REMOTE_VFN longlong3 operator/(long long a, const longlong3& b) { longlong3 r; r.x = (long long)(a / b.x); r.y = (long long)(a / b.y); r.z = (long long)(a / b.z); return r; }
__HIP_REMOTE_VFN longlong3& operator%=(longlong3& a, const longlong3& b) { a.x %= b.x; a.y %= b.y; a.z %= b.z; return a; }
__HIP_REMOTE_VFN longlong3& operator%=(longlong3& a, long long b) { a.x %= b; a.y %= b; a.z %= b; return a; }
__HIP_REMOTE_VFN longlong3 operator%(longlong3 a, const longlong3& b) { return a %= b; }
__HIP_REMOTE_VFN longlong3 operator%(longlong3 a, long long b) { return a %= b; }
__HIP_REMOTE_VFN longlong3 operator%(long long a, const longlong3& b) { longlong3 r; r.x = (long long)(a % b.x); r.y = (long long)(a % b.y); r.z = (long long)(a % b.z); return r; }
__HIP_REMOTE_VFN longlong3& operator&=(longlong3& a, const longlong3& b) { a.x &= b.x; a.y &= b.y; a.z &= b.z; return a; }
__HIP_REMOTE_VFN longlong3& operator&=(longlong3& a, long long b) { a.x &= b; a.y &= b; a.z &= b; return a; }
__HIP_REMOTE_VFN longlong3 operator&(longlong3 a, const longlong3& b) { return a &= b; }
__HIP_REMOTE_VFN longlong3 operator&(longlong3 a, long long b) { return a &= b; }
__HIP_REMOTE_VFN longlong3 operator&(long long a, const longlong3& b) { longlong3 r; r.x = (long long)(a & b.x); r.y = (long long)(a & b.y); r.z = (long long)(a & b.z); return r; }
__HIP_REMOTE_VFN longlong3& operator|=(longlong3& a, const longlong3& b) { a.x |= b.x; a.y |= b.y; a.z |= b.z; return a; }
__HIP_REMOTE_VFN longlong3& operator|=(longlong3& a, long long b) { a.x |= b; a.y |= b; a.z |= b; return a; }
__HIP_REMOTE_VFN longlong3 operator|(longlong3 a, const longlong3& b) { return a |= b; }
__HIP_REMOTE_VFN longlong3 operator|(longlong3 a, long long b) { return a |= b; }
__HIP_REMOTE_VFN longlong3 operator|(long long a, const longlong3& b) { longlong3 r; r.x = (long long)(a | b.x); r.y = (long long)(a | b.y); r.z = (long long)(a | b.z); return r; }
__HIP_REMOTE_VFN longlong3& operator^=(longlong3& a, const longlong3& b) { a.x ^= b.x; a.y ^= b.y; a.z ^= b.z; return a; }
__HIP_REMOTE_VFN longlong3& operator^=(longlong3& a, long long b) { a.x ^= b; a.y ^= b; a.z ^= b; return a; }
__HIP_REMOTE_VFN longlong3 operator^(longlong3 a, const longlong3& b) { return a ^= b; }
__HIP_REMOTE_VFN longlong3 operator^(longlong3 a, long long b) { return a ^= b; }
__HIP_REMOTE_VFN longlong3 operator^(long long a, const longlong3& b) { longlong3 r; r.x = (long long)(a ^ b.x); r.y = (long long)(a ^ b.y); r.z = (long long)(a ^ b.z); return r; }
__HIP_REMOTE_VFN longlong3& operator<<=(longlong3& a, const longlong3& b) { a.x <<= b.x; a.y <<= b.y; a.z <<= b.z; return a; }
__HIP_REMOTE_VFN longlong3& operator<<=(longlong3& a, long long b) { a.x <<= b; a.y <<= b; a.z <<= b; return a; }
__HIP_REMOTE_VFN longlong3 operator<<(longlong3 a, const longlong3& b) { return a <<= b; }
__HIP_REMOTE_VFN longlong3 operator<<(longlong3 a, long long b) { return a <<= b; }
__HIP_REMOTE_VFN longlong3 operator<<(long long a, const longlong3& b) { longlong3 r; r.x = (long long)(a << b.x); r.y = (long long)(a << b.y); r.z = (long long)(a << b.z); return r; }
__HIP_REMOTE_VFN longlong3& operator>>=(longlong3& a, const longlong3& b) { a.x >>= b.x; a.y >>= b.y; a.z >>= b.z; return a; }
__HIP_REMOTE_VFN longlong3& operator>>=(longlong3& a, long long b) { a.x >>= b; a.y >>= b; a.z >>= b; return a; }
__HIP_REMOTE_VFN longlong3 operator>>(longlong3 a, const longlong3& b) { return a >>= b; }
__HIP_REMOTE_VFN longlong3 operator>>(longlong3 a, long long b) { return a >>= b; }
__HIP_REMOTE_VFN longlong3 operator>>(long long a, const longlong3& b) { longlong3 r; r.x = (long long)(a >> b.x); r.y = (long long)(a >> b.y); r.z = (long long)(a >> b.z); return r; }
__HIP_REMOTE_VFN longlong3 operator-(const longlong3& a) { longlong3 r; r.x = (long long)-a.x; r.y = (long long)-a.y; r.z = (long long)-a.z; return r; }
__HIP_REMOTE_VFN longlong3 operator+(const longlong3& a) { return a; }
__HIP_REMOTE_VFN longlong3 operator~(const longlong3& a) { longlong3 r; r.x = (long long)~a.x; r.y = (long long)~a.y; r.z = (long long)~a.z; return r; }
__HIP_REMOTE_VFN bool operator==(const longlong3& a, const longlong3& b) { return a.x == b.x && a.y == b.y && a.z == b.z; }
__HIP_REMOTE_VFN bool operator!=(const longlong3& a, const longlong3& b) { return !(a == b); }
/* longlong4 */
__HIP_REMOTE_VFN longlong4& operator+=(longlong4& a, const longlong4& b) { a.x += b.x; a.y += b.y; a.z += b.z; a.w += b.w; return a; }
__HIP_REMOTE_VFN longlong4& operator+=(longlong4& a, long long b) { a.x += b; a.y += b; a.z += b; a.w += b; return a; }
__HIP_REMOTE_VFN longlong4 operator+(longlong4 a, const longlong4& b) { return a += b; }
__HIP_REMOTE_VFN longlong4 operator+(longlong4 a, long long b) { return a += b; }
__HIP_REMOTE_VFN longlong4 operator+(long long a, const longlong4& b) { longlong4 r; r.x = (long long)(a + b.x); r.y = (long long)(a + b.y); r.z = (long long)(a + b.z); r.w = (long long)(a + b.w); return r; }
__HIP_REMOTE_VFN longlong4& operator-=(longlong4& a, const longlong4& b) { a.x -= b.x; a.y -= b.y; a.z -= b.z; a.w -= b.w; return a; }
__HIP_REMOTE_VFN longlong4& operator-=(longlong4& a, long long b) { a.x -= b; a.y -= b; a.z -= b; a.w -= b; return a; }
__HIP_REMOTE_VFN longlong4 operator-(longlong4 a, const longlong4& b) { return a -= b; }
__HIP_REMOTE_VFN longlong4 operator-(longlong4 a, long long b) { return a -= b; }
__HIP_REMOTE_VFN longlong4 operator-(long long a, const longlong4& b) { longlong4 r; r.x = (long long)(a - b.x); r.y = (long long)(a - b.y); r.z = (long long)(a - b.z); r.w = (long long)(a - b.w); return r; }
__HIP_REMOTE_VFN longlong4& operator*=(longlong4& a, const longlong4& b) { a.x *= b.x; a.y *= b.y; a.z *= b.z; a.w *= b.w; return a; }
__HIP_REMOTE_VFN longlong4& operator*=(longlong4& a, long long b) { a.x *= b; a.y *= b; a.z *= b; a.w *= b; return a; }
__HIP_REMOTE_VFN longlong4 operator*(longlong4 a, const longlong4& b) { return a *= b; }
__HIP_REMOTE_VFN longlong4 operator*(longlong4 a, long long b) { return a *= b; }
__HIP_REMOTE_VFN longlong4 operator*(long long a, const longlong4& b) { longlong4 r; r.x = (long long)(a * b.x); r.y = (long long)(a * b.y); r.z = (long long)(a * b.z); r.w = (long long)(a * b.w); return r; }
__HIP_REMOTE_VFN longlong4& operator/=(longlong4& a, const longlong4& b) { a.x /= b.x; a.y /= b.y; a.z /= b.z; a.w /= b.w; return a; }
__HIP_REMOTE_VFN longlong4& operator/=(longlong4& a, long long b) { a.x /= b; a.y /= b; a.z /= b; a.w /= b; return a; }
__HIP_REMOTE_VFN longlong4 operator/(longlong4 a, const longlong4& b) { return a /= b; }
__HIP_REMOTE_VFN longlong4 operator/(longlong4 a, long long b) { return a /= b; }
__HIP_REMOTE_VFN longlong4 operator/(long long a, const longlong4& b) { longlong4 r; r.x = (long long)(a / b.x); r.y = (long long)(a / b.y); r.z = (long long)(a / b.z); r.w = (long long)(a / b.w); return r; }
__HIP_REMOTE_VFN longlong4& operator%=(longlong4& a, const longlong4& b) { a.x %= b.x; a.y %= b.y; a.z %= b.z; a.w %= b.w; return a; }
__HIP_REMOTE_VFN longlong4& operator%=(longlong4& a, long long b) { a.x %= b; a.y %= b; a.z %= b; a.w %= b; return a; }
__HIP_REMOTE_VFN longlong4 operator%(longlong4 a, const longlong4& b) { return a %= b; }
__HIP_REMOTE_VFN longlong4 operator%(longlong4 a, long long b) { return a %= b; }
__HIP_REMOTE_VFN longlong4 operator%(long long a, const longlong4& b) { longlong4 r; r.x = (long long)(a % b.x); r.y = (long long)(a % b.y); r.z = (long long)(a % b.z); r.w = (long long)(a % b.w); return r; }
__HIP_REMOTE_VFN longlong4& operator&=(longlong4& a, const longlong4& b) { a.x &= b.x; a.y &= b.y; a.z &= b.z; a.w &= b.w; return a; }
__HIP_REMOTE_VFN longlong4& operator&=(longlong4& a, long long b) { a.x &= b; a.y &= b; a.z &= b; a.w &= b; return a; }
__HIP_REMOTE_VFN longlong4 operator&(longlong4 a, const longlong4& b) { return a &= b; }
__HIP_REMOTE_VFN longlong4 operator&(longlong4 a, long long b) { return a &= b; }
__HIP_REMOTE_VFN longlong4 operator&(long long a, const longlong4& b) { longlong4 r; r.x = (long long)(a & b.x); r.y = (long long)(a & b.y); r.z = (long long)(a & b.z); r.w = (long long)(a & b.w); return r; }
__HIP_REMOTE_VFN longlong4& operator|=(longlong4& a, const longlong4& b) { a.x |= b.x; a.y |= b.y; a.z |= b.z; a.w |= b.w; return a; }
__HIP_REMOTE_VFN longlong4& operator|=(longlong4& a, long long b) { a.x |= b; a.y |= b; a.z |= b; a.w |= b; return a; }
__HIP_REMOTE_VFN longlong4 operator|(longlong4 a, const longlong4& b) { return a |= b; }
__HIP_REMOTE_VFN longlong4 operator|(longlong4 a, long long b) { return a |= b; }
__HIP_REMOTE_VFN longlong4 operator|(long long a, const longlong4& b) { longlong4 r; r.x = (long long)(a | b.x); r.y = (long long)(a | b.y); r.z = (long long)(a | b.z); r.w = (long long)(a | b.w); return r; }
__HIP_REMOTE_VFN longlong4& operator^=(longlong4& a, const longlong4& b) { a.x ^= b.x; a.y ^= b.y; a.z ^= b.z; a.w ^= b.w; return a; }
__HIP_REMOTE_VFN longlong4& operator^=(longlong4& a, long long b) { a.x ^= b; a.y ^= b; a.z ^= b; a.w ^= b; return a; }
__HIP_REMOTE_VFN longlong4 operator^(longlong4 a, const longlong4& b) { return a ^= b; }
__HIP_REMOTE_VFN longlong4 operator^(longlong4 a, long long b) { return a ^= b; }
__HIP_REMOTE_VFN longlong4 operator^(long long a, const longlong4& b) { longlong4 r; r.x = (long long)(a ^ b.x); r.y = (long long)(a ^ b.y); r.z = (long long)(a ^ b.z); r.w = (long long)(a ^ b.w); return r; }
__HIP_REMOTE_VFN longlong4& operator<<=(longlong4& a, const longlong4& b) { a.x <<= b.x; a.y <<= b.y; a.z <<= b.z; a.w <<= b.w; return a; }
__HIP_REMOTE_VFN longlong4& operator<<=(longlong4& a, long long b) { a.x <<= b; a.y <<= b; a.z <<= b; a.w <<= b; return a; }
__HIP_REMOTE_VFN longlong4 operator<<(longlong4 a, const longlong4& b) { return a <<= b; }
__HIP_REMOTE_VFN longlong4 operator<<(longlong4 a, long long b) { return a <<= b; }
__HIP_REMOTE_VFN longlong4 operator<<(long long a, const longlong4& b) { longlong4 r; r.x = (long long)(a << b.x); r.y = (long long)(a << b.y); r.z = (long long)(a << b.z); r.w = (long long)(a << b.w); return r; }
__HIP_REMOTE_VFN longlong4& operator>>=(longlong4& a, const longlong4& b) { a.x >>= b.x; a.y >>= b.y; a.z >>= b.z; a.w >>= b.w; return a; }
__HIP_REMOTE_VFN longlong4& operator>>=(longlong4& a, long long b) { a.x >>= b; a.y >>= b; a.z >>= b; a.w >>= b; return a; }
__HIP_REMOTE_VFN longlong4 operator>>(longlong4 a, const longlong4& b) { return a >>= b; }
__HIP_REMOTE_VFN longlong4 operator>>(longlong4 a, long long b) { return a >>= b; }
__HIP_REMOTE_VFN longlong4 operator>>(long long a, const longlong4& b) { longlong4 r; r.x = (long long)(a >> b.x); r.y = (long long)(a >> b.y); r.z = (long long)(a >> b.z); r.w = (long long)(a >> b.w); return r; }
__HIP_REMOTE_VFN longlong4 operator-(const longlong4& a) { longlong4 r; r.x = (long long)-a.x; r.y = (long long)-a.y; r.z = (long long)-a.z; r.w = (long long)-a.w; return r; }
__HIP_REMOTE_VFN longlong4 operator+(const longlong4& a) { return a; }
__HIP_REMOTE_VFN longlong4 operator~(const longlong4& a) { longlong4 r; r.x = (long long)~a.x; r.y = (long long)~a.y; r.z = (long long)~a.z; r.w = (long long)~a.w; return r; }
__HIP_REMOTE_VFN bool operator==(const longlong4& a, const longlong4& b) { return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w; }
__HIP_REMOTE_VFN bool operator!=(const longlong4& a, const longlong4& b) { return !(a == b); }
/* ulonglong1 */
__HIP_REMOTE_VFN ulonglong1& operator+=(ulonglong1& a, const ulonglong1& b) { a.x += b.x; return a; }
__HIP_REMOTE_VFN ulonglong1& operator+=(ulonglong1& a, unsigned long long b) { a.x += b; return a; }
__HIP_REMOTE_VFN ulonglong1 operator+(ulonglong1 a, const ulonglong1& b) { return a += b; }
__HIP_REMOTE_VFN ulonglong1 operator+(ulonglong1 a, unsigned long long b) { return a += b; }
__HIP_REMOTE_VFN ulonglong1 operator+(unsigned long long a, const ulonglong1& b) { ulonglong1 r; r.x = (unsigned long long)(a + b.x); return r; }
__HIP_REMOTE_VFN ulonglong1& operator-=(ulonglong1& a, const ulonglong1& b) { a.x -= b.x; return a; }
__HIP_REMOTE_VFN ulonglong1& operator-=(ulonglong1& a, unsigned long long b) { a.x -= b; return a; }
__HIP_REMOTE_VFN ulonglong1 operator-(ulonglong1 a, const ulonglong1& b) { return a -= b; }
__HIP_REMOTE_VFN ulonglong1 operator-(ulonglong1 a, unsigned long long b) { return a -= b; }
__HIP_REMOTE_VFN ulonglong1 operator-(unsigned long long a, const ulonglong1& b) { ulonglong1 r; r.x = (unsigned long long)(a - b.x); return r; }
__HIP_REMOTE_VFN ulonglong1& operator*=(ulonglong1& a, const ulonglong1& b) { a.x *= b.x; return a; }
__HIP_REMOTE_VFN ulonglong1& operator*=(ulonglong1& a, unsigned long long b) { a.x *= b; return a; }
__HIP_REMOTE_VFN ulonglong1 operator*(ulonglong1 a, const ulonglong1& b) { return a *= b; }
__HIP_REMOTE_VFN ulonglong1 operator*(ulonglong1 a, unsigned long long b) { return a *= b; }
__HIP_REMOTE_VFN ulonglong1 operator*(unsigned long long a, const ulonglong1& b) { ulonglong1 r; r.x = (unsigned long long)(a * b.x); return r; }
__HIP_REMOTE_VFN ulonglong1& operator/=(ulonglong1& a, const ulonglong1& b) { a.x /= b.x; return a; }
__HIP_REMOTE_VFN ulonglong1& operator/=(ulonglong1& a, unsigned long long b) { a.x /= b; return a; }
__HIP_REMOTE_VFN ulonglong1 operator/(ulonglong1 a, const ulonglong1& b) { return a /= b; }
__HIP_REMOTE_VFN ulonglong1 operator/(ulonglong1 a, unsigned long long b) { return a /= b; }
__HIP_REMOTE_VFN ulonglong1 operator/(unsigned long long a, const ulonglong1& b) { ulonglong1 r; r.x = (unsigned long long)(a / b.x); return r; }
__HIP_REMOTE_VFN ulonglong1& operator%=(ulonglong1& a, const ulonglong1& b) { a.x %= b.x; return a; }
__HIP_REMOTE_VFN ulonglong1& operator%=(ulonglong1& a, unsigned long long b) { a.x %= b; return a; }
__HIP_REMOTE_VFN ulonglong1 operator%(ulonglong1 a, const ulonglong1& b) { return a %= b; }
__HIP_REMOTE_VFN ulonglong1 operator%(ulonglong1 a, unsigned long long b) { return a %= b; }
__HIP_REMOTE_VFN ulonglong1 operator%(unsigned long long a, const ulonglong1& b) { ulonglong1 r; r.x = (unsigned long long)(a % b.x); return r; }
__HIP_REMOTE_VFN ulonglong1& operator&=(ulonglong1& a, const ulonglong1& b) { a.x &= b.x; return a; }
__HIP_REMOTE_VFN ulonglong1& operator&=(ulonglong1& a, unsigned long long b) { a.x &= b; return a; }
__HIP_REMOTE_VFN ulonglong1 operator&(ulonglong1 a, const ulonglong1& b) { return a &= b; }
__HIP_REMOTE_VFN ulonglong1 operator&(ulonglong1 a, unsigned long long b) { return a &= b; }
__HIP_REMOTE_VFN ulonglong1 operator&(unsigned long long a, const ulonglong1& b) { ulonglong1 r; r.x = (unsigned long long)(a & b.x); return r; }
__HIP_REMOTE_VFN ulonglong1& operator|=(ulonglong1& a, const ulonglong1& b) { a.x |= b.x; return a; }
__HIP_REMOTE_VFN ulonglong1& operator|=(ulonglong1& a, unsigned long long b) { a.x |= b; return a; }
__HIP_REMOTE_VFN ulonglong1 operator|(ulonglong1 a, const ulonglong1& b) { return a |= b; }
__HIP_REMOTE_VFN ulonglong1 operator|(ulonglong1 a, unsigned long long b) { return a |= b; }
__HIP_REMOTE_VFN ulonglong1 operator|(unsigned long long a, const ulonglong1& b) { ulonglong1 r; r.x = (unsigned long long)(a | b.x); return r; }
__HIP_REMOTE_VFN ulonglong1& operator^=(ulonglong1& a, const ulonglong1& b) { a.x ^= b.x; return a; }
__HIP_REMOTE_VFN ulonglong1& operator^=(ulonglong1& a, unsigned long long b) { a.x ^= b; return a; }
__HIP_REMOTE_VFN ulonglong1 operator^(ulonglong1 a, const ulonglong1& b) { return a ^= b; }
__HIP_REMOTE_VFN ulonglong1 operator^(ulonglong1 a, unsigned long long b) { return a ^= b; }
__HIP_REMOTE_VFN ulonglong1 operator^(unsigned long long a, const ulonglong1& b) { ulonglong1 r; r.x = (unsigned long long)(a ^ b.x); return r; }
__HIP_REMOTE_VFN ulonglong1& operator<<=(ulonglong1& a, const ulonglong1& b) { a.x <<= b.x; return a; }
__HIP_REMOTE_VFN ulonglong1& operator<<=(ulonglong1& a, unsigned long long b) { a.x <<= b; return a; }
__HIP_REMOTE_VFN ulonglong1 operator<<(ulonglong1 a, const ulonglong1& b) { return a <<= b; }
__HIP_REMOTE_VFN ulonglong1 operator<<(ulonglong1 a, unsigned long long b) { return a <<= b; }
__HIP_REMOTE_VFN ulonglong1 operator<<(unsigned long long a, const ulonglong1& b) { ulonglong1 r; r.x = (unsigned long long)(a << b.x); return r; }
__HIP_REMOTE_VFN ulonglong1& operator>>=(ulonglong1& a, const ulonglong1& b) { a.x >>= b.x; return a; }
__HIP_REMOTE_VFN ulonglong1& operator>>=(ulonglong1& a, unsigned long long b) { a.x >>= b; return a; }
__HIP_REMOTE_VFN ulonglong1 operator>>(ulonglong1 a, const ulonglong1& b) { return a >>= b; }
__HIP_REMOTE_VFN ulonglong1 operator>>(ulonglong1 a, unsigned long long b) { return a >>= b; }
__HIP_REMOTE_VFN ulonglong1 operator>>(unsigned long long a, const ulonglong1& b) { ulonglong1 r; r.x = (unsigned long long)(a >> b.x); return r; }
__HIP_REMOTE_VFN ulonglong1 operator-(const ulonglong1& a) { ulonglong1 r; r.x = (unsigned long long)-a.x; return r; }
__HIP_REMOTE_VFN ulonglong1 operator+(const ulonglong1& a) { return a; }
__HIP_REMOTE_VFN ulonglong1 operator~(const ulonglong1& a) { ulonglong1 r; r.x = (unsigned long long)~a.x; return r; }
__HIP_REMOTE_VFN bool operator==(const ulonglong1& a, const ulonglong1& b) { return a.x == b.x; }
__HIP_REMOTE_VFN bool operator!=(const ulonglong1& a, const ulonglong1& b) { return !(a == b); }
/* ulonglong2 */
__HIP_REMOTE_VFN ulonglong2& operator+=(ulonglong2& a, const ulonglong2& b) { a.x += b.x; a.y += b.y; return a; }
__HIP_REMOTE_VFN ulonglong2& operator+=(ulonglong2& a, unsigned long long b) { a.x += b; a.y += b; return a; }
__HIP_REMOTE_VFN ulonglong2 operator+(ulonglong2 a, const ulonglong2& b) { return a += b; }
__HIP_REMOTE_VFN ulonglong2 operator+(ulonglong2 a, unsigned long long b) { return a += b; }
__HIP_REMOTE_VFN ulonglong2 operator+(unsigned long long a, const ulonglong2& b) { ulonglong2 r; r.x = (unsigned long long)(a + b.x); r.y = (unsigned long long)(a + b.y); return r; }
__HIP_REMOTE_VFN ulonglong2& operator-=(ulonglong2& a, const ulonglong2& b) { a.x -= b.x; a.y -= b.y; return a; }
__HIP_REMOTE_VFN ulonglong2& operator-=(ulonglong2& a, unsigned long long b) { a.x -= b; a.y -= b; return a; }
__HIP_REMOTE_VFN ulonglong2 operator-(ulonglong2 a, const ulonglong2& b) { return a -= b; }
__HIP_REMOTE_VFN ulonglong2 operator-(ulonglong2 a, unsigned long long b) { return a -= b; }
__HIP_REMOTE_VFN ulonglong2 operator-(unsigned long long a, const ulonglong2& b) { ulonglong2 r; r.x = (unsigned long long)(a - b.x); r.y = (unsigned long long)(a - b.y); return r; }
__HIP_REMOTE_VFN ulonglong2& operator*=(ulonglong2& a, const ulonglong2& b) { a.x *= b.x; a.y *= b.y; return a; }
__HIP_REMOTE_VFN ulonglong2& operator*=(ulonglong2& a, unsigned long long b) { a.x *= b; a.y *= b; return a; }
__HIP_REMOTE_VFN ulonglong2 operator*(ulonglong2 a, const ulonglong2& b) { return a *= b; }
__HIP_REMOTE_VFN ulonglong2 operator*(ulonglong2 a, unsigned long long b) { return a *= b; }
__HIP_REMOTE_VFN ulonglong2 operator*(unsigned long long a, const ulonglong2& b) { ulonglong2 r; r.x = (unsigned long long)(a * b.x); r.y = (unsigned long long)(a * b.y); return r; }
__HIP_REMOTE_VFN ulonglong2& operator/=(ulonglong2& a, const ulonglong2& b) { a.x /= b.x; a.y /= b.y; return a; }
__HIP_REMOTE_VFN ulonglong2& operator/=(ulonglong2& a, unsigned long long b) { a.x /= b; a.y /= b; return a; }
__HIP_REMOTE_VFN ulonglong2 operator/(ulonglong2 a, const ulonglong2& b) { return a /= b; }
__HIP_REMOTE_VFN ulonglong2 operator/(ulonglong2 a, unsigned long long b) { return a /= b; }
__HIP_REMOTE_VFN ulonglong2 operator/(unsigned long long a, const ulonglong2& b) { ulonglong2 r; r.x = (unsigned long long)(a / b.x); r.y = (unsigned long long)(a / b.y); return r; }
__HIP_REMOTE_VFN ulonglong2& operator%=(ulonglong2& a, const ulonglong2& b) { a.x %= b.x; a.y %= b.y; return a; }
__HIP_REMOTE_VFN ulonglong2& operator%=(ulonglong2& a, unsigned long long b) { a.x %= b; a.y %= b; return a; }
__HIP_REMOTE_VFN ulonglong2 operator%(ulonglong2 a, const ulonglong2& b) { return a %= b; }
__HIP_REMOTE_VFN ulonglong2 operator%(ulonglong2 a, unsigned long long b) { return a %= b; }
__HIP_REMOTE_VFN ulonglong2 operator%(unsigned long long a, const ulonglong2& b) { ulonglong2 r; r.x = (unsigned long long)(a % b.x); r.y = (unsigned long long)(a % b.y); return r; }
__HIP_REMOTE_VFN ulonglong2& operator&=(ulonglong2& a, const ulonglong2& b) { a.x &= b.x; a.y &= b.y; return a; }
__HIP_REMOTE_VFN ulonglong2& operator&=(ulonglong2& a, unsigned long long b) { a.x &= b; a.y &= b; return a; }
__HIP_REMOTE_VFN ulonglong2 operator&(ulonglong2 a, const ulonglong2& b) { return a &= b; }
__HIP_REMOTE_VFN ulonglong2 operator&(ulonglong2 a, unsigned long long b) { return a &= b; }
__HIP_REMOTE_VFN ulonglong2 operator&(unsigned long long a, const ulonglong2& b) { ulonglong2 r; r.x = (unsigned long long)(a & b.x); r.y = (unsigned long long)(a & b.y); return r; }
__HIP_REMOTE_VFN ulonglong2& operator|=(ulonglong2& a, const ulonglong2& b) { a.x |= b.x; a.y |= b.y; return a; }
__HIP_REMOTE_VFN ulonglong2& operator|=(ulonglong2& a, unsigned long long b) { a.x |= b; a.y |= b; return a; }
__HIP_REMOTE_VFN ulonglong2 operator|(ulonglong2 a, const ulonglong2& b) { return a |= b; }
__HIP_REMOTE_VFN ulonglong2 operator|(ulonglong2 a, unsigned long long b) { return a |= b; }
__HIP_REMOTE_VFN ulonglong2 operator|(unsigned long long a, const ulonglong2& b) { ulonglong2 r; r.x = (unsigned long long)(a | b.x); r.y = (unsigned long long)(a | b.y); return r; }
__HIP_REMOTE_VFN ulonglong2& operator^=(ulonglong2& a, const ulonglong2& b) { a.x ^= b.x; a.y ^= b.y; return a; }
__HIP_REMOTE_VFN ulonglong2& operator^=(ulonglong2& a, unsigned long long b) { a.x ^= b; a.y ^= b; return a; }
__HIP_REMOTE_VFN ulonglong2 operator^(ulonglong2 a, const ulonglong2& b) { return a ^= b; }
__HIP_REMOTE_VFN ulonglong2 operator^(ulonglong2 a, unsigned long long b) { return a ^= b; }
__HIP_REMOTE_VFN ulonglong2 operator^(unsigned long long a, const ulonglong2& b) { ulonglong2 r; r.x = (unsigned long long)(a ^ b.x); r.y = (unsigned long long)(a ^ b.y); return r; }
__HIP_REMOTE_VFN ulonglong2& operator<<=(ulonglong2& a, const ulonglong2& b) { a.x <<= b.x; a.y <<= b.y; return a; }
__HIP_REMOTE_VFN ulonglong2& operator<<=(ulonglong2& a, unsigned long long b) { a.x <<= b; a.y <<= b; return a; }
__HIP_REMOTE_VFN ulonglong2 operator<<(ulonglong2 a, const ulonglong2& b) { return a <<= b; }
__HIP_REMOTE_VFN ulonglong2 operator<<(ulonglong2 a, unsigned long long b) { return a <<= b; }
__HIP_REMOTE_VFN ulonglong2 operator<<(unsigned long long a, const ulonglong2& b) { ulonglong2 r; r.x = (unsigned long long)(a << b.x); r.y = (unsigned long long)(a << b.y); return r; }
__HIP_REMOTE_VFN ulonglong2& operator>>=(ulonglong2& a, const ulonglong2& b) { a.x >>= b.x; a.y >>= b.y; return a; }
__HIP_REMOTE_VFN ulonglong2& operator>>=(ulonglong2& a, unsigned long long b) { a.x >>= b; a.y >>= b; return a; }
__HIP_REMOTE_VFN ulonglong2 operator>>(ulonglong2 a, const ulonglong2& b) { return a >>= b; }
__HIP_REMOTE_VFN ulonglong2 operator>>(ulonglong2 a, unsigned long long b) { return a >>= b; }
__HIP_REMOTE_VFN ulonglong2 operator>>(unsigned long long a, const ulonglong2& b) { ulonglong2 r; r.x = (unsigned long long)(a >> b.x); r.y = (unsigned long long)(a >> b.y); return r; }
__HIP_REMOTE_VFN ulonglong2 operator-(const ulonglong2& a) { ulonglong2 r; r.x = (unsigned long long)-a.x; r.y = (unsigned long long)-a.y; return r; }
__HIP_REMOTE_VFN ulonglong2 operator+(const ulonglong2& a) { return a; }
__HIP_REMOTE_VFN ulonglong2 operator~(const ulonglong2& a) { ulonglong2 r; r.x = (unsigned long long)~a.x; r.y = (unsigned long long)~a.y; return r; }
__HIP_REMOTE_VFN bool operator==(const ulonglong2& a, const ulonglong2& b) { return a.x == b.x && a.y == b.y; }
__HIP_REMOTE_VFN bool operator!=(const ulonglong2& a, const ulonglong2& b) { return !(a == b); }
/* ulonglong3 */
__HIP_REMOTE_VFN ulonglong3& operator+=(ulonglong3& a, const ulonglong3& b) { a.x += b.x; a.y += b.y; a.z += b.z; return a; }
__HIP_REMOTE_VFN ulonglong3& operator+=(ulonglong3& a, unsigned long long b) { a.x += b; a.y += b; a.z += b; return a; }
__HIP_REMOTE_VFN ulonglong3 operator+(ulonglong3 a, const ulonglong3& b) { return a += b; }
__HIP_REMOTE_VFN ulonglong3 operator+(ulonglong3 a, unsigned long long b) { return a += b; }
__HIP_REMOTE_VFN ulonglong3 operator+(unsigned long long a, const ulonglong3& b) { ulonglong3 r; r.x = (unsigned long long)(a + b.x); r.y = (unsigned long long)(a + b.y); r.z = (unsigned long long)(a + b.z); return r; }
__HIP_REMOTE_VFN ulonglong3& operator-=(ulonglong3& a, const ulonglong3& b) { a.x -= b.x; a.y -= b.y; a.z -= b.z; return a; }
__HIP_REMOTE_VFN ulonglong3& operator-=(ulonglong3& a, unsigned long long b) { a.x -= b; a.y -= b; a.z -= b; return a; }
__HIP_REMOTE_VFN ulonglong3 operator-(ulonglong3 a, const ulonglong3& b) { return a -= b; }
__HIP_REMOTE_VFN ulonglong3 operator-(ulonglong3 a, unsigned long long b) { return a -= b; }
__HIP_REMOTE_VFN ulonglong3 operator-(unsigned long long a, const ulonglong3& b) { ulonglong3 r; r.x = (unsigned long long)(a - b.x); r.y = (unsigned long long)(a - b.y); r.z = (unsigned long long)(a - b.z); return r; }
__HIP_REMOTE_VFN ulonglong3& operator*=(ulonglong3& a, const ulonglong3& b) { a.x *= b.x; a.y *= b.y; a.z *= b.z; return a; }
__HIP_REMOTE_VFN ulonglong3& operator*=(ulonglong3& a, unsigned long long b) { a.x *= b; a.y *= b; a.z *= b; return a; }
__HIP_REMOTE_VFN ulonglong3 operator*(ulonglong3 a, const ulonglong3& b) { return a *= b; }
__HIP_REMOTE_VFN ulonglong3 operator*(ulonglong3 a, unsigned long long b) { return a *= b; }
__HIP_REMOTE_VFN ulonglong3 operator*(unsigned long long a, const ulonglong3& b) { ulonglong3 r; r.x = (unsigned long long)(a * b.x); r.y = (unsigned long long)(a * b.y); r.z = (unsigned long long)(a * b.z); return r; }
__HIP_REMOTE_VFN ulonglong3& operator/=(ulonglong3& a, const ulonglong3& b) { a.x /= b.x; a.y /= b.y; a.z /= b.z; return a; }
__HIP_REMOTE_VFN ulonglong3& operator/=(ulonglong3& a, unsigned long long b) { a.x /= b; a.y /= b; a.z /= b; return a; }
__HIP_REMOTE_VFN ulonglong3 operator/(ulonglong3 a, const ulonglong3& b) { return a /= b; }
__HIP_REMOTE_VFN ulonglong3 operator/(ulonglong3 a, unsigned long long b) { return a /= b; }
__HIP_REMOTE_VFN ulonglong3 operator/(unsigned long long a, const ulonglong3& b) { ulonglong3 r; r.x = (unsigned long long)(a / b.x); r.y = (unsigned long long)(a / b.y); r.z = (unsigned long long)(a / b.z); return r; }
__HIP_REMOTE_VFN ulonglong3& operator%=(ulonglong3& a, const ulonglong3& b) { a.x %= b.x; a.y %= b.y; a.z %= b.z; return a; }
__HIP_REMOTE_VFN ulonglong3& operator%=(ulonglong3& a, unsigned long long b) { a.x %= b; a.y %= b; a.z %= b; return a; }
__HIP_REMOTE_VFN ulonglong3 operator%(ulonglong3 a, const ulonglong3& b) { return a %= b; }
__HIP_REMOTE_VFN ulonglong3 operator%(ulonglong3 a, unsigned long long b) { return a %= b; }
__HIP_REMOTE_VFN ulonglong3 operator%(unsigned long long a, const ulonglong3& b) { ulonglong3 r; r.x = (unsigned long long)(a % b.x); r.y = (unsigned long long)(a % b.y); r.z = (unsigned long long)(a % b.z); return r; }
__HIP_REMOTE_VFN ulonglong3& operator&=(ulonglong3& a, const ulonglong3& b) { a.x &= b.x; a.y &= b.y; a.z &= b.z; return a; }
__HIP_REMOTE_VFN ulonglong3& operator&=(ulonglong3& a, unsigned long long b) { a.x &= b; a.y &= b; a.z &= b; return a; }
__HIP_REMOTE_VFN ulonglong3 operator&(ulonglong3 a, const ulonglong3& b) { return a &= b; }
__HIP_REMOTE_VFN ulonglong3 operator&(ulonglong3 a, unsigned long long b) { return a &= b; }
__HIP_REMOTE_VFN ulonglong3 operator&(unsigned long long a, const ulonglong3& b) { ulonglong3 r; r.x = (unsigned long long)(a & b.x); r.y = (unsigned long long)(a & b.y); r.z = (unsigned long long)(a & b.z); return r; }
__HIP_REMOTE_VFN ulonglong3& operator|=(ulonglong3& a, const ulonglong3& b) { a.x |= b.x; a.y |= b.y; a.z |= b.z; return a; }
__HIP_REMOTE_VFN ulonglong3& operator|=(ulonglong3& a, unsigned long long b) { a.x |= b; a.y |= b; a.z |= b; return a; }
__HIP_REMOTE_VFN ulonglong3 operator|(ulonglong3 a, const ulonglong3& b) { return a |= b; }
__HIP_REMOTE_VFN ulonglong3 operator|(ulonglong3 a, unsigned long long b) { return a |= b; }
__HIP_REMOTE_VFN ulonglong3 operator|(unsigned long long a, const ulonglong3& b) { ulonglong3 r; r.x = (unsigned long long)(a | b.x); r.y = (unsigned long long)(a | b.y); r.z = (unsigned long long)(a | b.z); return r; }
__HIP_REMOTE_VFN ulonglong3& operator^=(ulonglong3& a, const ulonglong3& b) { a.x ^= b.x; a.y ^= b.y; a.z ^= b.z; return a; }
__HIP_REMOTE_VFN ulonglong3& operator^=(ulonglong3& a, unsigned long long b) { a.x ^= b; a.y ^= b; a.z ^= b; return a; }
__HIP_REMOTE_VFN ulonglong3 operator^(ulonglong3 a, const ulonglong3& b) { return a ^= b; }
__HIP_REMOTE_VFN ulonglong3 operator^(ulonglong3 a, unsigned long long b) { return a ^= b; }
__HIP_REMOTE_VFN ulonglong3 operator^(unsigned long long a, const ulonglong3& b) { ulonglong3 r; r.x = (unsigned long long)(a ^ b.x); r.y = (unsigned long long)(a ^ b.y); r.z = (unsigned long long)(a ^ b.z); return r; }
__HIP_REMOTE_VFN ulonglong3& operator<<=(ulonglong3& a, const ulonglong3& b) { a.x <<= b.x; a.y <<= b.y; a.z <<= b.z; return a; }
__HIP_REMOTE_VFN ulonglong3& operator<<=(ulonglong3& a, unsigned long long b) { a.x <<= b; a.y <<= b; a.z <<= b; return a; }
__HIP_REMOTE_VFN ulonglong3 operator<<(ulonglong3 a, const ulonglong3& b) { return a <<= b; }
__HIP_REMOTE_VFN ulonglong3 operator<<(ulonglong3 a, unsigned long long b) { return a <<= b; }
__HIP_REMOTE_VFN ulonglong3 operator<<(unsigned long long a, const ulonglong3& b) { ulonglong3 r; r.x = (unsigned long long)(a << b.x); r.y = (unsigned long long)(a << b.y); r.z = (unsigned long long)(a << b.z); return r; }
__HIP_REMOTE_VFN ulonglong3& operator>>=(ulonglong3& a, const ulonglong3& b) { a.x >>= b.x; a.y >>= b.y; a.z >>= b.z; return a; }
__HIP_REMOTE_VFN ulonglong3& operator>>=(ulonglong3& a, unsigned long long b) { a.x >>= b; a.y >>= b; a.z >>= b; return a; }
__HIP_REMOTE_VFN ulonglong3 operator>>(ulonglong3 a, const ulonglong3& b) { return a >>= b; }
__HIP_REMOTE_VFN ulonglong3 operator>>(ulonglong3 a, unsigned long long b) { return a >>= b; }
__HIP_REMOTE_VFN ulonglong3 operator>>(unsigned long long a, const ulonglong3& b) { ulonglong3 r; r.x = (unsigned long long)(a >> b.x); r.y = (unsigned long long)(a >> b.y); r.z = (unsigned long long)(a >> b.z); return r; }
__HIP_REMOTE_VFN ulonglong3 operator-(const ulonglong3& a) { ulonglong3 r; r.x = (unsigned long long)-a.x; r.y = (unsigned long long)-a.y; r.z = (unsigned long long)-a.z; return r; }
__HIP_REMOTE_VFN ulonglong3 operator+(const ulonglong3& a) { return a; }
__HIP_REMOTE_VFN ulonglong3 operator~(const ulonglong3& a) { ulonglong3 r; r.x = (unsigned long long)~a.x; r.y = (unsigned long long)~a.y; r.z = (unsigned long long)~a.z; return r; }
__HIP_REMOTE_VFN bool operator==(const ulonglong3& a, const ulonglong3& b) { return a.x == b.x && a.y == b.y && a.z == b.z; }
__HIP_REMOTE_VFN bool operator!=(const ulonglong3& a, const ulonglong3& b) { return !(a == b); }
/* ulonglong4 */
__HIP_REMOTE_VFN ulonglong4& operator+=(ulonglong4& a, const ulonglong4& b) { a.x += b.x; a.y += b.y; a.z += b.z; a.w += b.w; return a; }
__HIP_REMOTE_VFN ulonglong4& operator+=(ulonglong4& a, unsigned long long b) { a.x += b; a.y += b; a.z += b; a.w += b; return a; }
__HIP_REMOTE_VFN ulonglong4 operator+(ulonglong4 a, const ulonglong4& b) { return a += b; }
__HIP_REMOTE_VFN ulonglong4 operator+(ulonglong4 a, unsigned long long b) { return a += b; }
__HIP_REMOTE_VFN ulonglong4 operator+(unsigned long long a, const ulonglong4& b) { ulonglong4 r; r.x = (unsigned long long)(a + b.x); r.y = (unsigned long long)(a + b.y); r.z = (unsigned long long)(a + b.z); r.w = (unsigned long long)(a + b.w); return r; }
__HIP_REMOTE_VFN ulonglong4& operator-=(ulonglong4& a, const ulonglong4& b) { a.x -= b.x; a.y -= b.y; a.z -= b.z; a.w -= b.w; return a; }
__HIP_REMOTE_VFN ulonglong4& operator-=(ulonglong4& a, unsigned long long b) { a.x -= b; a.y -= b; a.z -= b; a.w -= b; return a; }
__HIP_REMOTE_VFN ulonglong4 operator-(ulonglong4 a, const ulonglong4& b) { return a -= b; }
__HIP_REMOTE_VFN ulonglong4 operator-(ulonglong4 a, unsigned long long b) { return a -= b; }
__HIP_REMOTE_VFN ulonglong4 operator-(unsigned long long a, const ulonglong4& b) { ulonglong4 r; r.x = (unsigned long long)(a - b.x); r.y = (unsigned long long)(a - b.y); r.z = (unsigned long long)(a - b.z); r.w = (unsigned long long)(a - b.w); return r; }
__HIP_REMOTE_VFN ulonglong4& operator*=(ulonglong4& a, const ulonglong4& b) { a.x *= b.x; a.y *= b.y; a.z *= b.z; a.w *= b.w; return a; }
__HIP_REMOTE_VFN ulonglong4& operator*=(ulonglong4& a, unsigned long long b) { a.x *= b; a.y *= b; a.z *= b; a.w *= b; return a; }
__HIP_REMOTE_VFN ulonglong4 operator*(ulonglong4 a, const ulonglong4& b) { return a *= b; }
__HIP_REMOTE_VFN ulonglong4 operator*(ulonglong4 a, unsigned long long b) { return a *= b; }
__HIP_REMOTE_VFN ulonglong4 operator*(unsigned long long a, const ulonglong4& b) { ulonglong4 r; r.x = (unsigned long long)(a * b.x); r.y = (unsigned long long)(a * b.y); r.z = (unsigned long long)(a * b.z); r.w = (unsigned long long)(a * b.w); return r; }
__HIP_REMOTE_VFN ulonglong4& operator/=(ulonglong4& a, const ulonglong4& b) { a.x /= b.x; a.y /= b.y; a.z /= b.z; a.w /= b.w; return a; }
__HIP_REMOTE_VFN ulonglong4& operator/=(ulonglong4& a, unsigned long long b) { a.x /= b; a.y /= b; a.z /= b; a.w /= b; return a; }
__HIP_REMOTE_VFN ulonglong4 operator/(ulonglong4 a, const ulonglong4& b) { return a /= b; }
__HIP_REMOTE_VFN ulonglong4 operator/(ulonglong4 a, unsigned long long b) { return a /= b; }
__HIP_REMOTE_VFN ulonglong4 operator/(unsigned long long a, const ulonglong4& b) { ulonglong4 r; r.x = (unsigned long long)(a / b.x); r.y = (unsigned long long)(a / b.y); r.z = (unsigned long long)(a / b.z); r.w = (unsigned long long)(a / b.w); return r; }
__HIP_REMOTE_VFN ulonglong4& operator%=(ulonglong4& a, const ulonglong4& b) { a.x %= b.x; a.y %= b.y; a.z %= b.z; a.w %= b.w; return a; }
__HIP_REMOTE_VFN ulonglong4& operator%=(ulonglong4& a, unsigned long long b) { a.x %= b; a.y %= b; a.z %= b; a.w %= b; return a; }
__HIP_REMOTE_VFN ulonglong4 operator%(ulonglong4 a, const ulonglong4& b) { return a %= b; }
__HIP_REMOTE_VFN ulonglong4 operator%(ulonglong4 a, unsigned long long b) { return a %= b; }
__HIP_REMOTE_VFN ulonglong4 operator%(unsigned long long a, const ulonglong4& b) { ulonglong4 r; r.x = (unsigned long long)(a % b.x); r.y = (unsigned long long)(a % b.y); r.z = (unsigned long long)(a % b.z); r.w = (unsigned long long)(a % b.w); return r; }
__HIP_REMOTE_VFN ulonglong4& operator&=(ulonglong4& a, const ulonglong4& b) { a.x &= b.x; a.y &= b.y; a.z &= b.z; a.w &= b.w; return a; }
__HIP_REMOTE_VFN ulonglong4& operator&=(ulonglong4& a, unsigned long long b) { a.x &= b; a.y &= b; a.z &= b; a.w &= b; return a; }
__HIP_REMOTE_VFN ulonglong4 operator&(ulonglong4 a, const ulonglong4& b) { return a &= b; }
__HIP_REMOTE_VFN ulonglong4 operator&(ulonglong4 a, unsigned long long b) { return a &= b; }
__HIP_REMOTE_VFN ulonglong4 operator&(unsigned long long a, const ulonglong4& b) { ulonglong4 r; r.x = (unsigned long long)(a & b.x); r.y = (unsigned long long)(a & b.y); r.z = (unsigned long long)(a & b.z); r.w = (unsigned long long)(a & b.w); return r; }
__HIP_REMOTE_VFN ulonglong4& operator|=(ulonglong4& a, const ulonglong4& b) { a.x |= b.x; a.y |= b.y; a.z |= b.z; a.w |= b.w; return a; }
__HIP_REMOTE_VFN ulonglong4& operator|=(ulonglong4& a, unsigned long long b) { a.x |= b; a.y |= b; a.z |= b; a.w |= b; return a; }
__HIP_REMOTE_VFN ulonglong4 operator|(ulonglong4 a, const ulonglong4& b) { return a |= b; }
__HIP_REMOTE_VFN ulonglong4 operator|(ulonglong4 a, unsigned long long b) { return a |= b; }
__HIP_REMOTE_VFN ulonglong4 operator|(unsigned long long a, const ulonglong4& b) { ulonglong4 r; r.x = (unsigned long long)(a | b.x); r.y = (unsigned long long)(a | b.y); r.z = (unsigned long long)(a | b.z); r.w = (unsigned long long)(a | b.w); return r; }
__HIP_REMOTE_VFN ulonglong4& operator^=(ulonglong4& a, const ulonglong4& b) { a.x ^= b.x; a.y ^= b.y; a.z ^= b.z; a.w ^= b.w; return a; }
__HIP_REMOTE_VFN ulonglong4& operator^=(ulonglong4& a, unsigned long long b) { a.x ^= b; a.y ^= b; a.z ^= b; a.w ^= b; return a; }
__HIP_REMOTE_VFN ulonglong4 operator^(ulonglong4 a, const ulonglong4& b) { return a ^= b; }
__HIP_REMOTE_VFN ulonglong4 operator^(ulonglong4 a, unsigned long long b) { return a ^= b; }
__HIP_REMOTE_VFN ulonglong4 operator^(unsigned long long a, const ulonglong4& b) { ulonglong4 r; r.x = (unsigned long long)(a ^ b.x); r.y = (unsigned long long)(a ^ b.y); r.z = (unsigned long long)(a ^ b.z); r.w = (unsigned long long)(a ^ b.w); return r; }
__HIP_REMOTE_VFN ulonglong4& operator<<=(ulonglong4& a, const ulonglong4& b) { a.x <<= b.x; a.y <<= b.y; a.z <<= b.z; a.w <<= b.w; return a; }
__HIP_REMOTE_VFN ulonglong4& operator<<=(ulonglong4& a, unsigned long long b) { a.x <<= b; a.y <<= b; a.z <<= b; a.w <<= b; return a; }
__HIP_REMOTE_VFN ulonglong4 operator<<(ulonglong4 a, const ulonglong4& b) { return a <<= b; }
__HIP_REMOTE_VFN ulonglong4 operator<<(ulonglong4 a, unsigned long long b) { return a <<= b; }
__HIP_REMOTE_VFN ulonglong4 operator<<(unsigned long long a, const ulonglong4& b) { ulonglong4 r; r.x = (unsigned long long)(a << b.x); r.y = (unsigned long long)(a << b.y); r.z = (unsigned long long)(a << b.z); r.w = (unsigned long long)(a << b.w); return r; }
__HIP_REMOTE_VFN ulonglong4& operator>>=(ulonglong4& a, const ulonglong4& b) { a.x >>= b.x; a.y >>= b.y; a.z >>= b.z; a.w >>= b.w; return a; }
__HIP_REMOTE_VFN ulonglong4& operator>>=(ulonglong4& a, unsigned long long b) { a.x >>= b; a.y >>= b; a.z >>= b; a.w >>= b; return a; }
__HIP_REMOTE_VFN ulonglong4 operator>>(ulonglong4 a, const ulonglong4& b) { return a >>= b; }
__HIP_REMOTE_VFN ulonglong4 operator>>(ulonglong4 a, unsigned long long b) { return a >>= b; }
__HIP_REMOTE_VFN ulonglong4 operator>>(unsigned long long a, const ulonglong4& b) { ulonglong4 r; r.x = (unsigned long long)(a >> b.x); r.y = (unsigned long long)(a >> b.y); r.z = (unsigned long long)(a >> b.z); r.w = (unsigned long long)(a >> b.w); return r; }
__HIP_REMOTE_VFN ulonglong4 operator-(const ulonglong4& a) { ulonglong4 r; r.x = (unsigned long long)-a.x; r.y = (unsigned long long)-a.y; r.z = (unsigned long long)-a.z; r.w = (unsigned long long)-a.w; return r; }
__HIP_REMOTE_VFN ulonglong4 operator+(const ulonglong4& a) { return a; }
__HIP_REMOTE_VFN ulonglong4 operator~(const ulonglong4& a) { ulonglong4 r; r.x = (unsigned long long)~a.x; r.y = (unsigned long long)~a.y; r.z = (unsigned long long)~a.z; r.w = (unsigned long long)~a.w; return r; }
__HIP_REMOTE_VFN bool operator==(const ulonglong4& a, const ulonglong4& b) { return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w; }
__HIP_REMOTE_VFN bool operator!=(const ulonglong4& a, const ulonglong4& b) { return !(a == b); }
/* float1 */
__HIP_REMOTE_VFN float1& operator+=(float1& a, const float1& b) { a.x += b.x; return a; }
__HIP_REMOTE_VFN float1& operator+=(float1& a, float b) { a.x += b; return a; }
__HIP_REMOTE_VFN float1 operator+(float1 a, const float1& b) { return a += b; }
__HIP_REMOTE_VFN float1 operator+(float1 a, float b) { return a += b; }
__HIP_REMOTE_VFN float1 operator+(float a, const float1& b) { float1 r; r.x = (float)(a + b.x); return r; }
__HIP_REMOTE_VFN float1& operator-=(float1& a, const float1& b) { a.x -= b.x; return a; }
__HIP_REMOTE_VFN float1& operator-=(float1& a, float b) { a.x -= b; return a; }
__HIP_REMOTE_VFN float1 operator-(float1 a, const float1& b) { return a -= b; }
__HIP_REMOTE_VFN float1 operator-(float1 a, float b) { return a -= b; }
__HIP_REMOTE_VFN float1 operator-(float a, const float1& b) { float1 r; r.x = (float)(a - b.x); return r; }
__HIP_REMOTE_VFN float1& operator*=(float1& a, const float1& b) { a.x *= b.x; return a; }
__HIP_REMOTE_VFN float1& operator*=(float1& a, float b) { a.x *= b; return a; }
__HIP_REMOTE_VFN float1 operator*(float1 a, const float1& b) { return a *= b; }
__HIP_REMOTE_VFN float1 operator*(float1 a, float b) { return a *= b; }
__HIP_REMOTE_VFN float1 operator*(float a, const float1& b) { float1 r; r.x = (float)(a * b.x); return r; }
__HIP_REMOTE_VFN float1& operator/=(float1& a, const float1& b) { a.x /= b.x; return a; }
__HIP_REMOTE_VFN float1& operator/=(float1& a, float b) { a.x /= b; return a; }
__HIP_REMOTE_VFN float1 operator/(float1 a, const float1& b) { return a /= b; }
__HIP_REMOTE_VFN float1 operator/(float1 a, float b) { return a /= b; }
__HIP_REMOTE_VFN float1 operator/(float a, const float1& b) { float1 r; r.x = (float)(a / b.x); return r; }
__HIP_REMOTE_VFN float1 operator-(const float1& a) { float1 r; r.x = (float)-a.x; return r; }
__HIP_REMOTE_VFN float1 operator+(const float1& a) { return a; }
__HIP_REMOTE_VFN bool operator==(const float1& a, const float1& b) { return a.x == b.x; }
__HIP_REMOTE_VFN bool operator!=(const float1& a, const float1& b) { return !(a == b); }
/* float2 */
__HIP_REMOTE_VFN float2& operator+=(float2& a, const float2& b) { a.x += b.x; a.y += b.y; return a; }
__HIP_REMOTE_VFN float2& operator+=(float2& a, float b) { a.x += b; a.y += b; return a; }
__HIP_REMOTE_VFN float2 operator+(float2 a, const float2& b) { return a += b; }
__HIP_REMOTE_VFN float2 operator+(float2 a, float b) { return a += b; }
__HIP_REMOTE_VFN float2 operator+(float a, const float2& b) { float2 r; r.x = (float)(a + b.x); r.y = (float)(a + b.y); return r; }
__HIP_REMOTE_VFN float2& operator-=(float2& a, const float2& b) { a.x -= b.x; a.y -= b.y; return a; }
__HIP_REMOTE_VFN float2& operator-=(float2& a, float b) { a.x -= b; a.y -= b; return a; }
__HIP_REMOTE_VFN float2 operator-(float2 a, const float2& b) { return a -= b; }
__HIP_REMOTE_VFN float2 operator-(float2 a, float b) { return a -= b; }
__HIP_REMOTE_VFN float2 operator-(float a, const float2& b) { float2 r; r.x = (float)(a - b.x); r.y = (float)(a - b.y); return r; }
__HIP_REMOTE_VFN float2& operator*=(float2& a, const float2& b) { a.x *= b.x; a.y *= b.y; return a; }
__HIP_REMOTE_VFN float2& operator*=(float2& a, float b) { a.x *= b; a.y *= b; return a; }
__HIP_REMOTE_VFN float2 operator*(float2 a, const float2& b) { return a *= b; }
__HIP_REMOTE_VFN float2 operator*(float2 a, float b) { return a *= b; }
__HIP_REMOTE_VFN float2 operator*(float a, const float2& b) { float2 r; r.x = (float)(a * b.x); r.y = (float)(a * b.y); return r; }
__HIP_REMOTE_VFN float2& operator/=(float2& a, const float2& b) { a.x /= b.x; a.y /= b.y; return a; }
__HIP_REMOTE_VFN float2& operator/=(float2& a, float b) { a.x /= b; a.y /= b; return a; }
__HIP_REMOTE_VFN float2 operator/(float2 a, const float2& b) { return a /= b; }
__HIP_REMOTE_VFN float2 operator/(float2 a, float b) { return a /= b; }
__HIP_REMOTE_VFN float2 operator/(float a, const float2& b) { float2 r; r.x = (float)(a / b.x); r.y = (float)(a / b.y); return r; }
__HIP_REMOTE_VFN float2 operator-(const float2& a) { float2 r; r.x = (float)-a.x; r.y = (float)-a.y; return r; }
__HIP_REMOTE_VFN float2 operator+(const float2& a) { return a; }
__HIP_REMOTE_VFN bool operator==(const float2& a, const float2& b) { return a.x == b.x && a.y == b.y; }
__HIP_REMOTE_VFN bool operator!=(const float2& a, const float2& b) { return !(a == b); }
/* float3 */
__HIP_REMOTE_VFN float3& operator+=(float3& a, const float3& b) { a.x += b.x; a.y += b.y; a.z += b.z; return a; }
__HIP_REMOTE_VFN float3& operator+=(float3& a, float b) { a.x += b; a.y += b; a.z += b; return a; }
__HIP_REMOTE_VFN float3 operator+(float3 a, const float3& b) { return a += b; }
__HIP_REMOTE_VFN float3 operator+(float3 a, float b) { return a += b; }
__HIP_REMOTE_VFN float3 operator+(float a, const float3& b) { float3 r; r.x = (float)(a + b.x); r.y = (float)(a + b.y); r.z = (float)(a + b.z); return r; }
__HIP_REMOTE_VFN float3& operator-=(float3& a, const float3& b) { a.x -= b.x; a.y -= b.y; a.z -= b.z; return a; }
__HIP_REMOTE_VFN float3& operator-=(float3& a, float b) { a.x -= b; a.y -= b; a.z -= b; return a; }
__HIP_REMOTE_VFN float3 operator-(float3 a, const float3& b) { return a -= b; }
__HIP_REMOTE_VFN float3 operator-(float3 a, float b) { return a -= b; }
__HIP_REMOTE_VFN float3 operator-(float a, const float3& b) { float3 r; r.x = (float)(a - b.x); r.y = (float)(a - b.y); r.z = (float)(a - b.z); return r; }
__HIP_REMOTE_VFN float3& operator*=(float3& a, const float3& b) { a.x *= b.x; a.y *= b.y; a.z *= b.z; return a; }
__HIP_REMOTE_VFN float3& operator*=(float3& a, float b) { a.x *= b; a.y *= b; a.z *= b; return a; }
__HIP_REMOTE_VFN float3 operator*(float3 a, const float3& b) { return a *= b; }
__HIP_REMOTE_VFN float3 operator*(float3 a, float b) { return a *= b; }
__HIP_REMOTE_VFN float3 operator*(float a, const float3& b) { float3 r; r.x = (float)(a * b.x); r.y = (float)(a * b.y); r.z = (float)(a * b.z); return r; }
__HIP_REMOTE_VFN float3& operator/=(float3& a, const float3& b) { a.x /= b.x; a.y /= b.y; a.z /= b.z; return a; }
__HIP_REMOTE_VFN float3& operator/=(float3& a, float b) { a.x /= b; a.y /= b; a.z /= b; return a; }
__HIP_REMOTE_VFN float3 operator/(float3 a, const float3& b) { return a /= b; }
__HIP_REMOTE_VFN float3 operator/(float3 a, float b) { return a /= b; }
__HIP_REMOTE_VFN float3 operator/(float a, const float3& b) { float3 r; r.x = (float)(a / b.x); r.y = (float)(a / b.y); r.z = (float)(a / b.z); return r; }
__HIP_REMOTE_VFN float3 operator-(const float3& a) { float3 r; r.x = (float)-a.x; r.y = (float)-a.y; r.z = (float)-a.z; return r; }
__HIP_REMOTE_VFN float3 operator+(const float3& a) { return a; }
__HIP_REMOTE_VFN bool operator==(const float3& a, const float3& b) { return a.x == b.x && a.y == b.y && a.z == b.z; }
__HIP_REMOTE_VFN bool operator!=(const float3& a, const float3& b) { return !(a == b); }
/* float4 */
__HIP_REMOTE_VFN float4& operator+=(float4& a, const float4& b) { a.x += b.x; a.y += b.y; a.z += b.z; a.w += b.w; return a; }
__HIP_REMOTE_VFN float4& operator+=(float4& a, float b) { a.x += b; a.y += b; a.z += b; a.w += b; return a; }
__HIP_REMOTE_VFN float4 operator+(float4 a, const float4& b) { return a += b; }
__HIP_REMOTE_VFN float4 operator+(float4 a, float b) { return a += b; }
__HIP_REMOTE_VFN float4 operator+(float a, const float4& b) { float4 r; r.x = (float)(a + b.x); r.y = (float)(a + b.y); r.z = (float)(a + b.z); r.w = (float)(a + b.w); return r; }
__HIP_REMOTE_VFN float4& operator-=(float4& a, const float4& b) { a.x -= b.x; a.y -= b.y; a.z -= b.z; a.w -= b.w; return a; }
__HIP_REMOTE_VFN float4& operator-=(float4& a, float b) { a.x -= b; a.y -= b; a.z -= b; a.w -= b; return a; }
__HIP_REMOTE_VFN float4 operator-(float4 a, const float4& b) { return a -= b; }
__HIP_REMOTE_VFN float4 operator-(float4 a, float b) { return a -= b; }
__HIP_REMOTE_VFN float4 operator-(float a, const float4& b) { float4 r; r.x = (float)(a - b.x); r.y = (float)(a - b.y); r.z = (float)(a - b.z); r.w = (float)(a - b.w); return r; }
__HIP_REMOTE_VFN float4& operator*=(float4& a, const float4& b) { a.x *= b.x; a.y *= b.y; a.z *= b.z; a.w *= b.w; return a; }
__HIP_REMOTE_VFN float4& operator*=(float4& a, float b) { a.x *= b; a.y *= b; a.z *= b; a.w *= b; return a; }
__HIP_REMOTE_VFN float4 operator*(float4 a, const float4& b) { return a *= b; }
__HIP_REMOTE_VFN float4 operator*(float4 a, float b) { return a *= b; }
__HIP_REMOTE_VFN float4 operator*(float a, const float4& b) { float4 r; r.x = (float)(a * b.x); r.y = (float)(a * b.y); r.z = (float)(a * b.z); r.w = (float)(a * b.w); return r; }
__HIP_REMOTE_VFN float4& operator/=(float4& a, const float4& b) { a.x /= b.x; a.y /= b.y; a.z /= b.z; a.w /= b.w; return a; }
__HIP_REMOTE_VFN float4& operator/=(float4& a, float b) { a.x /= b; a.y /= b; a.z /= b; a.w /= b; return a; }
__HIP_REMOTE_VFN float4 operator/(float4 a, const float4& b) { return a /= b; }
__HIP_REMOTE_VFN float4 operator/(float4 a, float b) { return a /= b; }
__HIP_REMOTE_VFN float4 operator/(float a, const float4& b) { float4 r; r.x = (float)(a / b.x); r.y = (float)(a / b.y); r.z = (float)(a / b.z); r.w = (float)(a / b.w); return r; }
__HIP_REMOTE_VFN float4 operator-(const float4& a) { float4 r; r.x = (float)-a.x; r.y = (float)-a.y; r.z = (float)-a.z; r.w = (float)-a.w; return r; }
__HIP_REMOTE_VFN float4 operator+(const float4& a) { return a; }
__HIP_REMOTE_VFN bool operator==(const float4& a, const float4& b) { return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w; }
__HIP_REMOTE_VFN bool operator!=(const float4& a, const float4& b) { return !(a == b); }
/* double1 */
__HIP_REMOTE_VFN double1& operator+=(double1& a, const double1& b) { a.x += b.x; return a; }
__HIP_REMOTE_VFN double1& operator+=(double1& a, double b) { a.x += b; return a; }
__HIP_REMOTE_VFN double1 operator+(double1 a, const double1& b) { return a += b; }
__HIP_REMOTE_VFN double1 operator+(double1 a, double b) { return a += b; }
__HIP_REMOTE_VFN double1 operator+(double a, const double1& b) { double1 r; r.x = (double)(a + b.x); return r; }
__HIP_REMOTE_VFN double1& operator-=(double1& a, const double1& b) { a.x -= b.x; return a; }
__HIP_REMOTE_VFN double1& operator-=(double1& a, double b) { a.x -= b; return a; }
__HIP_REMOTE_VFN double1 operator-(double1 a, const double1& b) { return a -= b; }
__HIP_REMOTE_VFN double1 operator-(double1 a, double b) { return a -= b; }
__HIP_REMOTE_VFN double1 operator-(double a, const double1& b) { double1 r; r.x = (double)(a - b.x); return r; }
__HIP_REMOTE_VFN double1& operator*=(double1& a, const double1& b) { a.x *= b.x; return a; }
__HIP_REMOTE_VFN double1& operator*=(double1& a, double b) { a.x *= b; return a; }
__HIP_REMOTE_VFN double1 operator*(double1 a, const double1& b) { return a *= b; }
__HIP_REMOTE_VFN double1 operator*(double1 a, double b) { return a *= b; }
__HIP_REMOTE_VFN double1 operator*(double a, const double1& b) { double1 r; r.x = (double)(a * b.x); return r; }
__HIP_REMOTE_VFN double1& operator/=(double1& a, const double1& b) { a.x /= b.x; return a; }
__HIP_REMOTE_VFN double1& operator/=(double1& a, double b) { a.x /= b; return a; }
__HIP_REMOTE_VFN double1 operator/(double1 a, const double1& b) { return a /= b; }
__HIP_REMOTE_VFN double1 operator/(double1 a, double b) { return a /= b; }
__HIP_REMOTE_VFN double1 operator/(double a, const double1& b) { double1 r; r.x = (double)(a / b.x); return r; }
__HIP_REMOTE_VFN double1 operator-(const double1& a) { double1 r; r.x = (double)-a.x; return r; }
__HIP_REMOTE_VFN double1 operator+(const double1& a) { return a; }
__HIP_REMOTE_VFN bool operator==(const double1& a, const double1& b) { return a.x == b.x; }
__HIP_REMOTE_VFN bool operator!=(const double1& a, const double1& b) { return !(a == b); }
/* double2 */
__HIP_REMOTE_VFN double2& operator+=(double2& a, const double2& b) { a.x += b.x; a.y += b.y; return a; }
__HIP_REMOTE_VFN double2& operator+=(double2& a, double b) { a.x += b; a.y += b; return a; }
__HIP_REMOTE_VFN double2 operator+(double2 a, const double2& b) { return a += b; }
__HIP_REMOTE_VFN double2 operator+(double2 a, double b) { return a += b; }
__HIP_REMOTE_VFN double2 operator+(double a, const double2& b) { double2 r; r.x = (double)(a + b.x); r.y = (double)(a + b.y); return r; }
__HIP_REMOTE_VFN double2& operator-=(double2& a, const double2& b) { a.x -= b.x; a.y -= b.y; return a; }
__HIP_REMOTE_VFN double2& operator-=(double2& a, double b) { a.x -= b; a.y -= b; return a; }
__HIP_REMOTE_VFN double2 operator-(double2 a, const double2& b) { return a -= b; }
__HIP_REMOTE_VFN double2 operator-(double2 a, double b) { return a -= b; }
__HIP_REMOTE_VFN double2 operator-(double a, const double2& b) { double2 r; r.x = (double)(a - b.x); r.y = (double)(a - b.y); return r; }
__HIP_REMOTE_VFN double2& operator*=(double2& a, const double2& b) { a.x *= b.x; a.y *= b.y; return a; }
__HIP_REMOTE_VFN double2& operator*=(double2& a, double b) { a.x *= b; a.y *= b; return a; }
__HIP_REMOTE_VFN double2 operator*(double2 a, const double2& b) { return a *= b; }
__HIP_REMOTE_VFN double2 operator*(double2 a, double b) { return a *= b; }
__HIP_REMOTE_VFN double2 operator*(double a, const double2& b) { double2 r; r.x = (double)(a * b.x); r.y = (double)(a * b.y); return r; }
__HIP_REMOTE_VFN double2& operator/=(double2& a, const double2& b) { a.x /= b.x; a.y /= b.y; return a; }
__HIP_REMOTE_VFN double2& operator/=(double2& a, double b) { a.x /= b; a.y /= b; return a; }
__HIP_REMOTE_VFN double2 operator/(double2 a, const double2& b) { return a /= b; }
__HIP_REMOTE_VFN double2 operator/(double2 a, double b) { return a /= b; }
__HIP_REMOTE_VFN double2 operator/(double a, const double2& b) { double2 r; r.x = (double)(a / b.x); r.y = (double)(a / b.y); return r; }
__HIP_REMOTE_VFN double2 operator-(const double2& a) { double2 r; r.x = (double)-a.x; r.y = (double)-a.y; return r; }
__HIP_REMOTE_VFN double2 operator+(const double2& a) { return a; }
__HIP_REMOTE_VFN bool operator==(const double2& a, const double2& b) { return a.x == b.x && a.y == b.y; }
__HIP_REMOTE_VFN bool operator!=(const double2& a, const double2& b) { return !(a == b); }
/* double3 */
__HIP_REMOTE_VFN double3& operator+=(double3& a, const double3& b) { a.x += b.x; a.y += b.y; a.z += b.z; return a; }
__HIP_REMOTE_VFN double3& operator+=(double3& a, double b) { a.x += b; a.y += b; a.z += b; return a; }
__HIP_REMOTE_VFN double3 operator+(double3 a, const double3& b) { return a += b; }
__HIP_REMOTE_VFN double3 operator+(double3 a, double b) { return a += b; }
__HIP_REMOTE_VFN double3 operator+(double a, const double3& b) { double3 r; r.x = (double)(a + b.x); r.y = (double)(a + b.y); r.z = (double)(a + b.z); return r; }
__HIP_REMOTE_VFN double3& operator-=(double3& a, const double3& b) { a.x -= b.x; a.y -= b.y; a.z -= b.z; return a; }
__HIP_REMOTE_VFN double3& operator-=(double3& a, double b) { a.x -= b; a.y -= b; a.z -= b; return a; }
__HIP_REMOTE_VFN double3 operator-(double3 a, const double3& b) { return a -= b; }
__HIP_REMOTE_VFN double3 operator-(double3 a, double b) { return a -= b; }
__HIP_REMOTE_VFN double3 operator-(double a, const double3& b) { double3 r; r.x = (double)(a - b.x); r.y = (double)(a - b.y); r.z = (double)(a - b.z); return r; }
__HIP_REMOTE_VFN double3& operator*=(double3& a, const double3& b) { a.x *= b.x; a.y *= b.y; a.z *= b.z; return a; }
__HIP_REMOTE_VFN double3& operator*=(double3& a, double b) { a.x *= b; a.y *= b; a.z *= b; return a; }
__HIP_REMOTE_VFN double3 operator*(double3 a, const double3& b) { return a *= b; }
__HIP_REMOTE_VFN double3 operator*(double3 a, double b) { return a *= b; }
__HIP_REMOTE_VFN double3 operator*(double a, const double3& b) { double3 r; r.x = (double)(a * b.x); r.y = (double)(a * b.y); r.z = (double)(a * b.z); return r; }
__HIP_REMOTE_VFN double3& operator/=(double3& a, const double3& b) { a.x /= b.x; a.y /= b.y; a.z /= b.z; return a; }
__HIP_REMOTE_VFN double3& operator/=(double3& a, double b) { a.x /= b; a.y /= b; a.z /= b; return a; }
__HIP_REMOTE_VFN double3 operator/(double3 a, const double3& b) { return a /= b; }
__HIP_REMOTE_VFN double3 operator/(double3 a, double b) { return a /= b; }
__HIP_REMOTE_VFN double3 operator/(double a, const double3& b) { double3 r; r.x = (double)(a / b.x); r.y = (double)(a / b.y); r.z = (double)(a / b.z); return r; }
__HIP_REMOTE_VFN double3 operator-(const double3& a) { double3 r; r.x = (double)-a.x; r.y = (double)-a.y; r.z = (double)-a.z; return r; }
__HIP_REMOTE_VFN double3 operator+(const double3& a) { return a; }
__HIP_REMOTE_VFN bool operator==(const double3& a, const double3& b) { return a.x == b.x && a.y == b.y && a.z == b.z; }
__HIP_REMOTE_VFN bool operator!=(const double3& a, const double3& b) { return !(a == b); }
/* double4 */
__HIP_REMOTE_VFN double4& operator+=(double4& a, const double4& b) { a.x += b.x; a.y += b.y; a.z += b.z; a.w += b.w; return a; }
__HIP_REMOTE_VFN double4& operator+=(double4& a, double b) { a.x += b; a.y += b; a.z += b; a.w += b; return a; }
__HIP_REMOTE_VFN double4 operator+(double4 a, const double4& b) { return a += b; }
__HIP_REMOTE_VFN double4 operator+(double4 a, double b) { return a += b; }
__HIP_REMOTE_VFN double4 operator+(double a, const double4& b) { double4 r; r.x = (double)(a + b.x); r.y = (double)(a + b.y); r.z = (double)(a + b.z); r.w = (double)(a + b.w); return r; }
__HIP_REMOTE_VFN double4& operator-=(double4& a, const double4& b) { a.x -= b.x; a.y -= b.y; a.z -= b.z; a.w -= b.w; return a; }
__HIP_REMOTE_VFN double4& operator-=(double4& a, double b) { a.x -= b; a.y -= b; a.z -= b; a.w -= b; return a; }
__HIP_REMOTE_VFN double4 operator-(double4 a, const double4& b) { return a -= b; }
__HIP_REMOTE_VFN double4 operator-(double4 a, double b) { return a -= b; }
__HIP_REMOTE_VFN double4 operator-(double a, const double4& b) { double4 r; r.x = (double)(a - b.x); r.y = (double)(a - b.y); r.z = (double)(a - b.z); r.w = (double)(a - b.w); return r; }
__HIP_REMOTE_VFN double4& operator*=(double4& a, const double4& b) { a.x *= b.x; a.y *= b.y; a.z *= b.z; a.w *= b.w; return a; }
__HIP_REMOTE_VFN double4& operator*=(double4& a, double b) { a.x *= b; a.y *= b; a.z *= b; a.w *= b; return a; }
__HIP_REMOTE_VFN double4 operator*(double4 a, const double4& b) { return a *= b; }
__HIP_REMOTE_VFN double4 operator*(double4 a, double b) { return a *= b; }
__HIP_REMOTE_VFN double4 operator*(double a, const double4& b) { double4 r; r.x = (double)(a * b.x); r.y = (double)(a * b.y); r.z = (double)(a * b.z); r.w = (double)(a * b.w); return r; }
__HIP_REMOTE_VFN double4& operator/=(double4& a, const double4& b) { a.x /= b.x; a.y /= b.y; a.z /= b.z; a.w /= b.w; return a; }
__HIP_REMOTE_VFN double4& operator/=(double4& a, double b) { a.x /= b; a.y /= b; a.z /= b; a.w /= b; return a; }
__HIP_REMOTE_VFN double4 operator/(double4 a, const double4& b) { return a /= b; }
__HIP_REMOTE_VFN double4 operator/(double4 a, double b) { return a /= b; }
__HIP_REMOTE_VFN double4 operator/(double a, const double4& b) { double4 r; r.x = (double)(a / b.x); r.y = (double)(a / b.y); r.z = (double)(a / b.z); r.w = (double)(a / b.w); return r; }
__HIP_REMOTE_VFN double4 operator-(const double4& a) { double4 r; r.x = (double)-a.x; r.y = (double)-a.y; r.z = (double)-a.z; r.w = (double)-a.w; return r; }
__HIP_REMOTE_VFN double4 operator+(const double4& a) { return a; }
__HIP_REMOTE_VFN bool operator==(const double4& a, const double4& b) { return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w; }
__HIP_REMOTE_VFN bool operator!=(const double4& a, const double4& b) { return !(a == b); }

#undef __HIP_REMOTE_VFN
#endif /* HIP_REMOTE_DEVICE_VECTOR_OPS_H */
