#!/usr/bin/env python3
"""Writes the fixture's PDF pages (kb/<tenant>/*.pdf) with a small hand-rolled PDF writer.

Each PDF uses the standard Helvetica Type 1 font (no embedding), one content stream per page,
a running header line and a "Page N of M" footer, and an /Info dictionary with /Title. The
page text is ASCII only. Run: python3 eval/quayside/make_pdfs.py (the output is committed).
Metadata for the help centre (document_id, tenant, groups, ...) is in <file>.pdf.meta.yaml.
"""

import os
import runpy

HERE = os.path.dirname(os.path.abspath(__file__))


# The writer is eval/fernhill/make_pdfs.py's (one PDF per document, same layout).
_WRITER = runpy.run_path(os.path.join(HERE, "..", "fernhill", "make_pdfs.py"))


DOCS = {}

DOCS["quayside/freight-and-commercial-vehicles"] = (
    "Freight and commercial vehicle tariff 2026-27",
    "Quayside Ferries Ltd - Freight and commercial vehicle tariff - 30 March 2026 to 27 March 2027",
    """
# Freight and commercial vehicle tariff 2026-27
Quayside Ferries Ltd. Valid for sailings from 30 March 2026 to 27 March 2027.
Prices in this tariff exclude VAT, which is added at the standard rate.

1. WHO THIS TARIFF IS FOR
This tariff applies to goods vehicles, coaches, livestock trailers and
any vehicle over 10.0 m long or over 3,500 kg gross weight. Cars, vans and
motorhomes below those limits pay the fares in Fares and tickets.

2. RATES PER METRE
Commercial vehicles are charged by length, per metre or part metre, for
each single crossing. A minimum charge applies to each vehicle.

Route                       Per metre       Minimum charge
Ardcarron - Brannock        GBP 14.20       GBP 85.00
Ardcarron - Skerrin         GBP 25.60       GBP 154.00
Port Lachan - Halmay        GBP 7.10        GBP 42.50
Skerrin - Halmay            GBP 10.80       GBP 64.80

The driver of a commercial vehicle travels free. Any other crew member
pays the adult foot passenger fare.

3. SURCHARGES
Item                                     Charge
Dangerous goods (declared)               GBP 35.00 per vehicle
Livestock trailer                        GBP 18.00 per trailer
Unaccompanied trailer (drop and collect) GBP 40.00 handling
Booking made less than 24 hours ahead    GBP 20.00 per booking
Wide load (over 2.55 m wide)             Priced on request
Livestock and unaccompanied trailer surcharges are added to the rate
per metre, not instead of it.
<<PAGE>>
4. VEHICLE LIMITS BY SHIP
Ship                Max length    Max height    Max gross weight
MV Loch Carron      16.5 m        4.5 m         44 tonnes
MV Skerrin Star     18.0 m        4.8 m         44 tonnes
MV Halmay Lass      12.0 m        4.2 m         18 tonnes
MV Eilidh           14.0 m        4.5 m         32 tonnes

5. DANGEROUS GOODS
Dangerous goods must be declared to the freight team at least 24 hours
before the sailing, with a completed declaration form. Some classes can
only travel on sailings with no passengers on board; the freight team will
tell you which sailings these are. Undeclared dangerous goods will be re-
fused at check-in and the booking charged in full.

6. CREDIT ACCOUNTS
Regular customers can open a freight credit account if they expect to
spend at least GBP 1,000 a year. We send one invoice for each calendar
month, and payment is due within 30 days of the invoice date. Accounts
more than 14 days overdue are placed on stop, and bookings must then be
paid in advance until the balance is cleared.

7. BOOKING AND CHECK-IN
Freight bookings open 16 weeks ahead. Commercial vehicles must check in
at least 45 minutes before departure. Freight and commercial bookings:
0141 496 0550, Monday to Friday 06:00 to 20:00.
""",
)

DOCS["spokely/tariff-sheet-2026"] = (
    "Spokely tariff sheet 2026",
    "Spokely B.V. - Tariff sheet - valid from 1 February 2026 - all amounts in EUR incl. 21% VAT",
    """
# Spokely tariff sheet 2026
Spokely B.V., Amsterdam. Valid from 1 February 2026 until further notice.
All amounts are in euros (EUR) and include 21% Dutch VAT, unless marked
"excl. VAT". This sheet is part of the Spokely Terms of Use.

1. RIDE RATES BY BIKE TYPE
Bike type              Unlock fee    Per minute    24-hour cap
Classic bike           EUR 1.00      EUR 0.20      EUR 18.00
E-bike                 EUR 1.00      EUR 0.34      EUR 30.00
Cargo e-bike           EUR 1.50      EUR 0.45      EUR 36.00
Rates above are Pay As You Go rates. Subscribers pay the rates in their
plan; the cargo e-bike rate is the same for everyone*.
* Spokely Unlimited E members get a 25% discount on cargo e-bike minutes.

Cargo e-bikes are available in Amsterdam and Utrecht only and can carry
up to 80 kg in the front box, including children in the fitted seat.

2. RESERVATIONS
You can reserve a bike for up to 15 minutes before you unlock it. The
first 10 minutes are free; after that a reservation costs EUR 0.10 per
minute until you unlock the bike or the reservation ends.
<<PAGE>>
3. SERVICE FEES
Item                                          Amount
Refundable deposit (Pay As You Go only)       EUR 49.00
Parking outside a hub in a hub-only area      EUR 10.00
Bike removed by the municipality              EUR 25.00 plus the fine
Admin fee on fines passed on to you           EUR 15.00
Failed direct debit                           EUR 6.50
Replacement Spokely key fob                   EUR 7.50
Damage and loss fees                          See the Damage and lost
                                              bike fees page

4. SPOKELY FOR TEAMS (BUSINESS)
Teams plan                 EUR 11.50 per rider a month, excl. VAT
Minimum team size          5 riders
Invoicing                  Monthly, payment within 14 days
Teams riders get unlimited 30-minute rides on classic bikes and e-bike
minutes at EUR 0.18 excl. VAT. Team admins can add or remove riders at
any time; a rider removed during a month is charged for the full month.

5. CHANGES TO THESE RATES
We tell subscribers about price changes by email at least 30 days before
they take effect. If you don't accept a change, you can cancel your
subscription before the new price applies, without a fee. Changes to
Pay As You Go rates apply from the date shown in the app.
""",
)


def main():
    _WRITER["write_all"](DOCS, HERE, "quayside make_pdfs.py")


if __name__ == "__main__":
    main()
